//! What happened, for people: usage and cost summed from the ledger (`usage.rs`, the user's
//! prices in `prices.rs`, the user's days in `time_zone.rs`), the attempt ledger as listed,
//! the latest quota readings, `status.rs` (every connection and pool in one screen, and its line), and which routing changes the desktop notifies (`alerts.rs`, shown through `alert_watch.rs`).

pub(crate) mod alert_watch;
pub(crate) mod alerts;
pub(crate) mod attempts;
pub(crate) mod audit;
pub(crate) mod me;
pub(crate) mod prices;
pub(crate) mod quota;
pub(crate) mod status;
pub(crate) mod time_zone;
pub(crate) mod usage;
