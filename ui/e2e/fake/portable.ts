// The fake engine's export and import (issue 7) and the dialog plugin's save/open answers:
// files live in memory by path; export writes format v1 without keys; import validates like the
// real one (errors name the path in the document), renames or skips taken slugs, creates
// profiles disabled and without keys, and reports the wanted routing mode as pending.
import type { ImportReport, IpcError } from '../../src/lib/types';
import type { FakeEngine } from './engine';

function fail(message: string): never {
  throw { code: 'invalid', message, gates: null } satisfies IpcError;
}

const COMMANDS = ['plugin:dialog|save', 'plugin:dialog|open', 'export_config', 'import_preview', 'import_apply', 'import_text_preview', 'import_text_apply'];
const MAX_BYTES = 1024 * 1024;

interface ProfileEntry { ref: string; label: string; weight: number; priority: number; primary: boolean }
interface ConnectionEntry {
  ref: string;
  slug: string;
  protocol: string;
  base_url: string;
  headers: { name: string; value: string }[];
  models: string[];
  mapping: Record<string, string>;
  routing: string;
  profiles: ProfileEntry[];
}

export class FakePortable {
  /** What the save dialog answers (`null`: the user cancelled). */
  savePath: string | null = '/home/user/switchyard-config.json';
  /** What the open dialog answers (`null`: the user cancelled). */
  openPath: string | null = '/home/user/shared.json';
  /** The options of each dialog shown. */
  dialogs: { kind: 'save' | 'open'; options: unknown }[] = [];
  /** The file system, by path. */
  files: Record<string, string> = {};
  private seq = 0;

  constructor(private readonly engine: FakeEngine) {}

  handles(cmd: string): boolean {
    return COMMANDS.includes(cmd);
  }

  async handle(cmd: string, a: Record<string, never>): Promise<unknown> {
    switch (cmd) {
      case 'plugin:dialog|save':
        this.dialogs.push({ kind: 'save', options: a.options });
        return this.savePath;
      case 'plugin:dialog|open':
        this.dialogs.push({ kind: 'open', options: a.options });
        return this.openPath;
      case 'export_config': {
        const text = this.export(a.slugs);
        this.files[a.path] = text;
        return { path: a.path, connections: (JSON.parse(text) as { connections: unknown[] }).connections.length };
      }
      case 'import_preview':
        return this.import(this.read(a.path), true, a.onConflict);
      case 'import_apply':
        return this.import(this.read(a.path), false, a.onConflict);
      case 'import_text_preview':
        return this.import(this.pasted(a.text), true, a.onConflict);
      case 'import_text_apply':
        return this.import(this.pasted(a.text), false, a.onConflict);
      default:
        return fail(`unknown command ${cmd}`);
    }
  }

  private read(path: string): string {
    const text = this.files[path] ?? fail(`cannot read ${path}: No such file or directory (os error 2)`);
    if (text.length > MAX_BYTES) fail(`${path} is ${text.length} bytes; a shared configuration is at most ${MAX_BYTES} bytes (1 MiB)`);
    return text;
  }

  private pasted(text: string): string {
    if (text.length > MAX_BYTES) fail(`the pasted text is ${text.length} bytes; a shared configuration is at most ${MAX_BYTES} bytes (1 MiB)`);
    return text;
  }

  export(slugs: string[] | null): string {
    const all = [...this.engine.connections].sort((x, y) => x.slug.localeCompare(y.slug));
    const missing = slugs?.find((s) => !all.some((c) => c.slug === s));
    if (missing) throw { code: 'not_found', message: `connection '${missing}' not found`, gates: null } satisfies IpcError;
    let p = 0;
    const connections: ConnectionEntry[] = all
      .filter((c) => slugs === null || slugs.includes(c.slug))
      .map((c, i) => ({
        ref: `c${i + 1}`,
        slug: c.slug,
        protocol: c.protocol,
        base_url: c.baseUrl,
        headers: c.headers,
        models: c.models,
        mapping: Object.fromEntries(c.mapping.map((m) => [m.from, m.to])),
        routing: c.mode,
        profiles: this.engine.profiles
          .filter((x) => x.connectionId === c.id)
          .sort((x, y) => x.priority - y.priority)
          .map((x) => ({ ref: `p${++p}`, label: x.label, weight: x.weight, priority: x.priority, primary: x.primary })),
      }));
    return JSON.stringify({ format: 'switchyard.config', version: 1, connections }, null, 2);
  }

  private parse(text: string): ConnectionEntry[] {
    let doc: { format?: unknown; version?: unknown; connections?: unknown };
    try {
      doc = JSON.parse(text);
    } catch (e) {
      return fail(`document: not valid JSON (${(e as Error).message})`);
    }
    if (doc.format !== 'switchyard.config') fail(`format: expected "switchyard.config"`);
    if (doc.version !== 1) fail(`version: unsupported version ${String(doc.version)} (expected 1)`);
    if (!Array.isArray(doc.connections)) fail('connections: expected an array');
    const entries = doc.connections as ConnectionEntry[];
    entries.forEach((c, i) => {
      if (!/^https?:\/\//.test(c.base_url ?? '')) fail(`connections[${i}].base_url: must start with http:// or https://`);
      (c.profiles ?? []).forEach((p, j) => {
        if (!(p.weight >= 1 && p.weight <= 1000)) {
          fail(`connections[${i}].profiles[${j}].weight: must be between 1 and 1000 (got ${p.weight})`);
        }
      });
    });
    return entries;
  }

  private import(text: string, dryRun: boolean, onConflict: string): ImportReport {
    if (onConflict !== 'rename' && onConflict !== 'skip') fail(`on_conflict: unknown choice '${onConflict}' (expected rename or skip)`);
    const entries = this.parse(text);
    const taken = new Set(this.engine.connections.map((c) => c.slug));
    const report: ImportReport = { dry_run: dryRun, connections: [], created: 0, renamed: 0, skipped: 0 };
    for (const c of entries) {
      let action = 'create';
      let slug: string | null = c.slug;
      if (taken.has(c.slug)) {
        if (onConflict === 'skip') {
          action = 'skip';
          slug = null;
        } else {
          action = 'rename';
          let n = 2;
          while (taken.has(`${c.slug}-${n}`)) n += 1;
          slug = `${c.slug}-${n}`;
        }
      }
      if (slug) taken.add(slug);
      if (action === 'create') report.created += 1;
      else if (action === 'rename') report.renamed += 1;
      else report.skipped += 1;
      report.connections.push({
        ref: c.ref,
        slug: c.slug,
        action,
        new_slug: slug,
        pending_mode: slug && c.routing !== 'legacy' ? c.routing : null,
        profiles: c.profiles.map((p) => ({ ref: p.ref, label: p.label, primary: p.primary })),
      });
    }
    if (!dryRun) {
      entries.forEach((c, i) => {
        const slug = report.connections[i].new_slug;
        if (slug) this.create(c, slug);
      });
    }
    return report;
  }

  private create(c: ConnectionEntry, slug: string): void {
    const now = new Date().toISOString();
    const id = `ci_${String(++this.seq).padStart(4, '0')}`;
    this.engine.connections.push({
      id,
      slug,
      protocol: c.protocol,
      baseUrl: c.base_url,
      headers: c.headers,
      models: c.models,
      mapping: Object.entries(c.mapping).map(([from, to]) => ({ from, to })),
      basis: 1,
      revision: 1,
      mode: 'legacy',
      state: 'active',
      note: c.routing === 'legacy' ? null : `imported; ${c.routing} is pending until keys are added, enabled and verified`,
      activatedAt: null,
      activatedBy: null,
      createdAt: now,
      updatedAt: now,
    });
    for (const p of c.profiles) {
      this.engine.profiles.push({
        id: `pi_${String(++this.seq).padStart(4, '0')}`,
        connectionId: id,
        label: p.label,
        weight: p.weight,
        priority: p.priority,
        enabled: false,
        primary: p.primary,
        hasSecret: false,
        credentialRevision: 0,
        revision: 1,
        createdAt: now,
        updatedAt: now,
        evidence: null,
        health: [],
      });
    }
  }
}
