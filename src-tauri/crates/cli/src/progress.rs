//! The live progress line of `verify` on stderr: one rewritten line on a terminal, one line
//! per event otherwise (logs and CI). Silent in `--json` mode except for plain lines.
#![allow(clippy::print_stderr)]

use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use switchyard_engine::VerifyEvent;

pub struct Progress {
    tty: bool,
    running: Mutex<Vec<String>>,
}

impl Progress {
    pub fn new(json: bool) -> Self {
        Progress { tty: !json && std::io::stderr().is_terminal(), running: Mutex::new(Vec::new()) }
    }

    pub fn show(&self, event: &VerifyEvent) {
        let Ok(mut running) = self.running.lock() else {
            return;
        };
        let line = match event {
            VerifyEvent::Started { label, index, total, .. } => {
                running.push(label.clone());
                format!("[{index}/{total}] verifying {label}…")
            }
            VerifyEvent::Finished { result, done, total } => {
                running.retain(|l| l != &result.label);
                let kind = result.failure_kind.as_deref().map(|k| format!(" [{k}]")).unwrap_or_default();
                format!("[{done}/{total}] {}: {}{kind} — {}", result.label, result.outcome, result.detail)
            }
        };
        if self.tty {
            let waiting =
                if running.is_empty() { String::new() } else { format!("  (running: {})", running.join(", ")) };
            let mut err = std::io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K{line}{waiting}");
            if matches!(event, VerifyEvent::Finished { .. }) {
                let _ = writeln!(err, "\r\x1b[2K{line}");
            }
            let _ = err.flush();
        } else {
            eprintln!("{line}");
        }
    }

    pub fn finish(&self) {
        if self.tty {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
