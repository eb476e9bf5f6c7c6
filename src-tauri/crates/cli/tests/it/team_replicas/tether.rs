//! Children that die with the test: each replica and nginx is started through util-linux's
//! `setpriv --pdeathsig SIG` (it sets the signal and execs, so the child keeps its pid), so a test
//! process killed without running its drops (a timeout's SIGKILL) takes them along instead of
//! leaving orphans that keep a port, a database and the fds they inherited — among them the
//! `flock /tmp/cargo.lock` fd the tests run under, which an orphan holds until it exits. Where
//! `setpriv` is missing the child is started directly.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

const SETPRIV: &str = "/usr/bin/setpriv";

fn has_setpriv() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| Path::new(SETPRIV).exists())
}

/// `program` as a child that gets `signal` (`KILL`, `TERM`) when the thread that spawned it ends.
pub fn command(program: impl AsRef<std::ffi::OsStr>, signal: &str) -> Command {
    if !has_setpriv() {
        return Command::new(program);
    }
    let mut cmd = Command::new(SETPRIV);
    cmd.args(["--pdeathsig", signal, "--"]).arg(program);
    cmd
}
