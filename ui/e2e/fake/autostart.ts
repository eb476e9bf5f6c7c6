// The fake engine's "start with the system" (issue 17): the wish, and the entry path the
// shell reports once it wrote one. `unsupported` makes turning it on fail like a platform
// the app cannot wire yet.
import type { IpcError } from '../../src/lib/types';

const COMMANDS = ['autostart_status', 'autostart_set'];
export const FAKE_ENTRY = '/home/user/.config/autostart/switchyard.desktop';

export class FakeAutostart {
  enabled = false;
  unsupported = false;

  handles(cmd: string): boolean {
    return COMMANDS.includes(cmd);
  }

  private view() {
    return { enabled: this.enabled, entry: this.enabled ? FAKE_ENTRY : null };
  }

  async handle(cmd: string, a: Record<string, never>): Promise<unknown> {
    if (cmd === 'autostart_set') {
      const on = a.enabled as boolean;
      if (on && this.unsupported) {
        throw { code: 'precondition', message: 'starting with the system is only wired on Linux so far', gates: null } satisfies IpcError;
      }
      this.enabled = on;
    }
    return this.view();
  }
}
