//! `switchyard export --out FILE`: where the document went and how many connections it holds
//! (`{"out", "connections"}`). Without `--out` the document itself is the output.

use serde::Serialize;

use super::Render;

#[derive(Debug, Serialize)]
pub struct ExportWritten {
    /// The file written.
    pub out: String,
    /// How many connections it holds.
    pub connections: usize,
}

impl Render for ExportWritten {
    fn text(&self) -> String {
        format!(
            "exported {} connection(s) to {} (no secrets: the receiver adds keys after import)",
            self.connections, self.out
        )
    }
}
