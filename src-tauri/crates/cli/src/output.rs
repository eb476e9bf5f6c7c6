//! Everything the CLI writes to stdout: a result's JSON in `--json` mode, its text otherwise
//! (each view renders both, in `render/`), and errors as one stderr line. This is the only
//! module allowed to print.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use serde::Serialize;
use switchyard_engine::EngineError;

use crate::render::{self, Render, Shortfall};

/// The result of one subcommand, ready to print.
pub enum Output {
    /// A view: its JSON with `--json`, its text otherwise.
    View(Box<dyn Print>),
    /// A document printed as it is in both modes (`export` without `--out`: the file itself).
    Document(String),
    /// Nothing more to print (the command printed as it ran).
    Done,
    /// Nothing to print; the process exits with this code (`exec`: the child's).
    Exit(u8),
}

impl Output {
    pub fn view(v: impl Render + 'static) -> Self {
        Output::View(Box::new(v))
    }
}

/// A [`Render`] with its JSON turned into text, so results of any type can be boxed.
pub trait Print {
    fn json_text(&self) -> String;
    fn human_text(&self) -> String;
    fn shortfall(&self) -> Option<Shortfall>;
}

impl<T: Render> Print for T {
    fn json_text(&self) -> String {
        to_json(self)
    }

    fn human_text(&self) -> String {
        self.text()
    }

    fn shortfall(&self) -> Option<Shortfall> {
        Render::shortfall(self)
    }
}

/// Prints `out`; returns the process's exit code (docs/interface.md, "Exit codes").
pub fn print(out: &Output, json: bool) -> u8 {
    match out {
        Output::View(view) => {
            println!("{}", if json { view.json_text() } else { view.human_text() });
            match view.shortfall() {
                Some(s) => {
                    eprintln!("error: {}", s.message);
                    s.code
                }
                None => 0,
            }
        }
        Output::Document(doc) => {
            println!("{doc}");
            0
        }
        Output::Done => 0,
        Output::Exit(code) => *code,
    }
}

/// One line for the person at the terminal, on stderr (never part of a result).
pub fn note(line: &str) {
    eprintln!("{line}");
}

/// `text` with every control, zero-width and bidirectional-control character replaced by `�`:
/// what a server or a setting supplied reaches the terminal as text, never as an escape sequence
/// (a cleared screen, a changed title, a forged hyperlink).
pub fn terminal_safe(text: &str) -> String {
    text.chars().map(|c| if switchyard_core::secret_shape::is_hidden(c) { '\u{FFFD}' } else { c }).collect()
}

/// The relay's first stdout line (scripts wait for it).
pub fn print_listening(url: &str) {
    use std::io::Write;
    println!("relay listening on {url}");
    let _ = std::io::stdout().flush();
}

fn to_json<T: Serialize>(v: &T) -> String {
    serde_json::to_string_pretty(v)
        .unwrap_or_else(|e| format!("{{\"error\":{{\"code\":\"internal\",\"message\":\"{e}\"}}}}"))
}

/// One line on stderr; in JSON mode also `{"error": {"code", "message"}}` on stdout.
pub fn print_error(e: &EngineError, json: bool) {
    let message = render::error::message(e);
    if json {
        println!("{}", serde_json::to_string(&render::error::json(e, &message)).unwrap_or_default());
    }
    // Line by line: a message's own line breaks stay, anything else a server put in it does not.
    let message = message.lines().map(terminal_safe).collect::<Vec<_>>().join("\n");
    eprintln!("error: {message}");
    if !json {
        for line in render::error::details(e) {
            println!("{line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn a_server_s_escape_sequence_reaches_the_terminal_as_text() {
        assert_eq!(terminal_safe("AB\u{1b}[2J\u{7}-12"), "AB\u{FFFD}[2J\u{FFFD}-12", "ESC and BEL are replaced");
        assert_eq!(terminal_safe("x\u{202e}y\u{9b}z"), "x\u{FFFD}y\u{FFFD}z", "bidi control and CSI too");
        assert_eq!(terminal_safe("ABCD-1234 https://a.example/x"), "ABCD-1234 https://a.example/x", "text stays");
    }
}
