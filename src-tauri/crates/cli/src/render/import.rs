//! `switchyard import`: one line per connection (create, rename, skip), the totals and what
//! to do next; `--json` is the engine's `ImportReport`.

use switchyard_engine::ImportReport;

use super::Render;

impl Render for ImportReport {
    fn text(&self) -> String {
        let r = self;
        let mut out = Vec::new();
        if r.dry_run {
            out.push("dry run: nothing was written".to_string());
        }
        for c in &r.connections {
            let what = match (c.action.as_str(), &c.new_slug) {
                ("rename", Some(new)) => format!("rename  {} -> {new}", c.slug),
                ("skip", _) => format!("skip    {} (the slug exists here)", c.slug),
                _ => format!("create  {}", c.slug),
            };
            let mut line = format!("  {what:<40}");
            if c.action != "skip" {
                line.push_str(&format!(" {} profile(s), disabled, no credentials", c.profiles.len()));
                if let Some(mode) = &c.pending_mode {
                    line.push_str(&format!("; {mode} routing pending"));
                }
            }
            out.push(line.trim_end().to_string());
        }
        for p in &r.pools {
            out.push(format!("  pool    {p} (inactive until its gates hold)"));
        }
        let verb = if r.dry_run { "would be " } else { "" };
        out.push(format!("{} {verb}created, {} {verb}renamed, {} {verb}skipped", r.created, r.renamed, r.skipped));
        if !r.dry_run && r.created + r.renamed > 0 {
            out.push(
                "next, for each profile: switchyard profile rotate SLUG LABEL --secret-stdin; \
                 switchyard profile edit SLUG LABEL --enable; then switchyard verify SLUG \
                 (a pending routing mode starts by itself once the gates hold)"
                    .to_string(),
            );
        }
        out.join("\n")
    }
}
