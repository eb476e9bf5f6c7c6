#!/usr/bin/env bash
# Run under scripts/with-keychain: the Secret Service daemon is killed between two keychain
# calls, as gnome-keyring's own abort once ended it in CI, and the keychain must still answer —
# the secret stored before is read back and a new one is stored — because D-Bus starts the
# daemon again from with-keychain's service file, unlocked. Fails with the stock service file
# (the daemon comes back locked and wants a prompt).
set -euo pipefail
fail() { echo "daemon_restart: $*" >&2; exit 1; }

owner_pid() {
  dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus \
    org.freedesktop.DBus.GetConnectionUnixProcessID string:org.freedesktop.secrets | awk '/uint32/ {print $2}'
}

printf %s before-the-end | secret-tool store --label=restart service switchyard.restart account a
first=$(owner_pid)
[ -n "$first" ] || fail "no process owns org.freedesktop.secrets"
kill -9 "$first"
for _ in $(seq 50); do kill -0 "$first" 2>/dev/null || break; sleep 0.1; done
kill -0 "$first" 2>/dev/null && fail "the daemon $first did not end"

got=$(secret-tool lookup service switchyard.restart account a) || fail "the secret stored before the daemon ended cannot be read after"
[ "$got" = before-the-end ] || fail "read back '$got', not what was stored"
printf %s after-the-end | secret-tool store --label=restart service switchyard.restart account b ||
  fail "nothing can be stored after the daemon ended"
[ "$(secret-tool lookup service switchyard.restart account b)" = after-the-end ] || fail "the new secret does not read back"

second=$(owner_pid)
[ -n "$second" ] && [ "$second" != "$first" ] || fail "expected a new daemon, owner is '$second' (was $first)"
starts=$(wc -l <"$HOME/keyring-starts.log")
[ "$starts" -eq 2 ] || fail "expected two starts of the daemon, keyring-starts.log has $starts"
echo "daemon_restart: the keychain answered across the daemon's end (pid $first, then $second)"
