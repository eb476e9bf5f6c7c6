//! A unified diff of two texts (line LCS, three lines of context), for previews: `--- PATH`
//! (as it is) and `+++ PATH` (after set-up).

/// `--- PATH` / `+++ PATH` and the hunks; empty when the texts are equal.
pub fn unified(path: &str, before: &str, after: &str) -> String {
    if before == after {
        return String::new();
    }
    let a: Vec<&str> = before.split_inclusive('\n').collect();
    let b: Vec<&str> = after.split_inclusive('\n').collect();
    let ops = line_ops(&a, &b);
    let mut out = format!("--- {path}\n+++ {path}\n");
    const CONTEXT: usize = 3;
    let changed: Vec<usize> =
        ops.iter().enumerate().filter(|(_, o)| !matches!(o, Op::Same(..))).map(|(i, _)| i).collect();
    let mut i = 0;
    while i < changed.len() {
        let first = changed[i];
        let mut last = first;
        while i + 1 < changed.len() && changed[i + 1] <= last + 2 * CONTEXT + 1 {
            i += 1;
            last = changed[i];
        }
        i += 1;
        let from = first.saturating_sub(CONTEXT);
        let to = (last + CONTEXT + 1).min(ops.len());
        let (mut a_start, mut b_start) = (0, 0);
        for op in &ops[..from] {
            match op {
                Op::Same(..) => {
                    a_start += 1;
                    b_start += 1;
                }
                Op::Del(_) => a_start += 1,
                Op::Add(_) => b_start += 1,
            }
        }
        let a_len = ops[from..to].iter().filter(|o| !matches!(o, Op::Add(_))).count();
        let b_len = ops[from..to].iter().filter(|o| !matches!(o, Op::Del(_))).count();
        let start = |s: usize, len: usize| if len == 0 { s } else { s + 1 };
        out.push_str(&format!("@@ -{},{a_len} +{},{b_len} @@\n", start(a_start, a_len), start(b_start, b_len)));
        for op in &ops[from..to] {
            let (mark, line) = match op {
                Op::Same(l) => (' ', *l),
                Op::Del(l) => ('-', *l),
                Op::Add(l) => ('+', *l),
            };
            out.push(mark);
            out.push_str(line);
            if !line.ends_with('\n') {
                out.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
    out
}

enum Op<'a> {
    Same(&'a str),
    Del(&'a str),
    Add(&'a str),
}

/// The edit script of `a` into `b`: common prefix and suffix, LCS over the middle (a whole
/// replacement when the middle is too large for the table).
fn line_ops<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<Op<'a>> {
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = a[prefix..].iter().rev().zip(b[prefix..].iter().rev()).take_while(|(x, y)| x == y).count();
    let (am, bm) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let mut ops: Vec<Op<'a>> = a[..prefix].iter().map(|l| Op::Same(l)).collect();
    if am.len().saturating_mul(bm.len()) > 4_000_000 {
        ops.extend(am.iter().map(|l| Op::Del(l)));
        ops.extend(bm.iter().map(|l| Op::Add(l)));
    } else {
        let (n, m) = (am.len(), bm.len());
        let mut t = vec![0u32; (n + 1) * (m + 1)];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                t[i * (m + 1) + j] = if am[i] == bm[j] {
                    t[(i + 1) * (m + 1) + j + 1] + 1
                } else {
                    t[(i + 1) * (m + 1) + j].max(t[i * (m + 1) + j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        while i < n || j < m {
            if i < n && j < m && am[i] == bm[j] {
                ops.push(Op::Same(am[i]));
                i += 1;
                j += 1;
            } else if i < n && (j == m || t[(i + 1) * (m + 1) + j] >= t[i * (m + 1) + j + 1]) {
                ops.push(Op::Del(am[i]));
                i += 1;
            } else {
                ops.push(Op::Add(bm[j]));
                j += 1;
            }
        }
    }
    ops.extend(a[a.len() - suffix..].iter().map(|l| Op::Same(l)));
    ops
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
        assert!(new_file.ends_with("@@ -0,0 +1,1 @@\n+one\n"), "a new file is one added hunk: {new_file}");
    }
}
