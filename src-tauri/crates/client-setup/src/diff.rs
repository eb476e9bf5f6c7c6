//! The preview's unified diff (`--- PATH` as it is, `+++ PATH` after set-up, three lines of
//! context) on `similar`: Myers with a deadline, so time and memory stay bounded on any file.
//! What it prints is capped: a line past [`MAX_LINE_CHARS`] is cut, the whole past
//! [`MAX_DIFF_BYTES`] ends with a count of what was left out.

use std::time::Duration;

use similar::{Algorithm, TextDiff};

/// The most characters of one file line a preview shows.
pub const MAX_LINE_CHARS: usize = 400;
/// The most bytes a preview's diff holds.
pub const MAX_DIFF_BYTES: usize = 64 * 1024;

/// `--- PATH` / `+++ PATH` and the hunks; empty when the texts are equal.
pub(crate) fn unified(path: &str, before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    let diff =
        TextDiff::configure().algorithm(Algorithm::Myers).timeout(Duration::from_secs(2)).diff_lines(before, after);
    let full = diff.unified_diff().context_radius(3).missing_newline_hint(true).header(path, path).to_string();
    capped(&full)
}

/// `diff` with long lines cut and the whole cut at [`MAX_DIFF_BYTES`].
fn capped(diff: &str) -> String {
    let mut out = String::new();
    let mut lines = diff.split_inclusive('\n');
    for line in lines.by_ref() {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let chars = body.chars().count();
        let shown = if chars > MAX_LINE_CHARS + 1 {
            let cut: String = body.chars().take(MAX_LINE_CHARS + 1).collect();
            format!("{cut}… ({} more characters not shown)\n", chars - MAX_LINE_CHARS - 1)
        } else {
            line.to_string()
        };
        if out.len() + shown.len() > MAX_DIFF_BYTES {
            let rest = 1 + lines.count();
            out.push_str(&format!("… (the diff is cut here: {rest} more lines not shown)\n"));
            break;
        }
        out.push_str(&shown);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_one_hunk_with_context() {
        let before = "a\nb\nc\nd\ne\nf\ng\nh\n";
        let after = "a\nb\nc\nd\nE\nf\ng\nh\n";
        let d = unified("x.json", before, after);
        assert_eq!(d, "--- x.json\n+++ x.json\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n");
        assert_eq!(unified("x", "same\n", "same\n"), "", "no change, no diff");
        let new_file = unified("x", "", "one\n");
        assert!(new_file.ends_with("@@ -0,0 +1 @@\n+one\n"), "a new file is one added hunk: {new_file}");
        let no_newline = unified("x", "a", "b");
        assert!(no_newline.contains("-a\n\\ No newline at end of file\n+b\n"), "{no_newline}");
    }

    #[test]
    fn a_huge_one_line_file_prints_a_bounded_preview() {
        let before = format!("{{\"blob\": \"{}\"}}", "x".repeat(5 * 1024 * 1024));
        let after = format!("{before}\n");
        let d = unified("big.json", &before, &after);
        assert!(d.len() < 2 * MAX_LINE_CHARS + 512, "two cut lines, not 10 MB: {} bytes", d.len());
        assert!(d.contains("more characters not shown"), "says it cut: {}", &d[..200.min(d.len())]);
        let many: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
        let d = unified("many", "", &many);
        assert!(d.len() <= MAX_DIFF_BYTES + 100 && d.ends_with("more lines not shown)\n"), "the whole is capped too");
    }
}
