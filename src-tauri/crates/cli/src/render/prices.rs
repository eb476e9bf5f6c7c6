//! `switchyard prices` (every form): the price table, USD per million tokens per model
//! (`-` where a cache price is not given), and the monthly fees of subscription keys.

use switchyard_engine::PriceTable;

use super::Render;

impl Render for PriceTable {
    fn text(&self) -> String {
        let usd = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v}"));
        let mut out = Vec::new();
        if self.prices.is_empty() {
            out.push(
                "no prices set: every cost shows as unknown (`switchyard prices set MODEL --input USD --output USD`)"
                    .to_string(),
            );
        } else {
            out.push("USD per million tokens (\"-\": not given)".to_string());
            out.push(format!(
                "{:<40} {:>10} {:>10} {:>11} {:>12}",
                "MODEL", "INPUT", "OUTPUT", "CACHE_READ", "CACHE_WRITE"
            ));
            for p in &self.prices {
                out.push(format!(
                    "{:<40} {:>10} {:>10} {:>11} {:>12}",
                    p.model,
                    p.input,
                    p.output,
                    usd(p.cache_read),
                    usd(p.cache_write)
                ));
            }
        }
        for f in &self.fees {
            out.push(format!("fee: {} {} ({}) {} USD per month", f.connection, f.label, f.profile, f.monthly_usd));
        }
        out.join("\n")
    }
}
