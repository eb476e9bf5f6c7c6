//! What an admitted request holds until it ends ([`Ticket`]): its part of every matching
//! limit's window and its concurrency slots. Settled once: with the attempt that delivered
//! ([`Ticket::settle`], on the ledger's writer with that attempt's row: what it really spent
//! becomes used, the rest of the reservation goes back), or — dropped unsettled, the request
//! failed before any output — returned whole. Either way its slots are freed.

use switchyard_core::connection::Protocol;
use switchyard_core::limit::Measure;
use switchyard_core::prompt_cache::prompt_tokens;
use switchyard_store::attempts::AttemptRow;
use switchyard_store::limit_counters::Settle;

use crate::ledger::Ledger;
use crate::limits::book::Rates;

/// One limit's part of the reservation.
#[derive(Debug, Clone)]
pub(crate) struct Hold {
    pub limit_id: String,
    pub subject: String,
    pub window_start: i64,
    pub measure: Measure,
    pub reserved: i64,
}

/// What the ledger's writer does with a ended ticket: counters to settle, slots to free.
#[derive(Debug, Default)]
pub(crate) struct Settlement {
    pub settles: Vec<Settle>,
    /// (owner, holder) of the slots to free.
    pub slots: Option<(String, String)>,
}

#[derive(Debug)]
pub(crate) struct Ticket {
    pub(crate) holds: Vec<Hold>,
    /// (owner, holder) when the request holds concurrency slots.
    pub(crate) slots: Option<(String, String)>,
    /// The model's price, for a USD hold's settlement.
    pub(crate) rates: Option<Rates>,
    pub(crate) protocol: Protocol,
    ledger: Option<Ledger>,
}

impl Ticket {
    pub(crate) fn new(
        holds: Vec<Hold>,
        slots: Option<(String, String)>,
        rates: Option<Rates>,
        protocol: Protocol,
        ledger: Ledger,
    ) -> Self {
        Ticket { holds, slots, rates, protocol, ledger: Some(ledger) }
    }

    /// The settlement for `row`, the attempt that delivered: requests count 1; tokens and USD
    /// what the answer reported — or, when it reported nothing, the whole reservation (unknown
    /// is never spent as zero, invariant 30).
    pub(crate) fn settle(mut self, row: &AttemptRow) -> Settlement {
        self.ledger = None;
        let settles = self.settles(|h| match h.measure {
            Measure::Requests => 1,
            Measure::Tokens => self.tokens_of(row).unwrap_or(h.reserved),
            Measure::Usd => self.micro_usd_of(row).unwrap_or(h.reserved),
            Measure::Concurrency => 0,
        });
        Settlement { settles, slots: self.slots.take() }
    }

    /// Everything back: the request failed before output.
    fn returned(&mut self) -> Settlement {
        let settles = self.settles(|_| 0);
        Settlement { settles, slots: self.slots.take() }
    }

    /// Each counter hold settled with what `spent` says it spent (slots are freed, not settled).
    fn settles(&self, spent: impl Fn(&Hold) -> i64) -> Vec<Settle> {
        self.holds
            .iter()
            .filter(|h| h.measure != Measure::Concurrency)
            .map(|h| Settle {
                limit_id: h.limit_id.clone(),
                subject: h.subject.clone(),
                window_start: h.window_start,
                reserved: h.reserved,
                spent: spent(h),
            })
            .collect()
    }

    /// What the row's tokens cost at the model's rates (`Rates::micro_usd`).
    fn micro_usd_of(&self, row: &AttemptRow) -> Option<i64> {
        self.rates?.micro_usd(self.protocol, row)
    }
}

impl Ticket {
    /// Every token the row reported (the whole prompt, cache included, and the output); `None`
    /// when it reported none.
    fn tokens_of(&self, row: &AttemptRow) -> Option<i64> {
        if row.input_tokens.is_none() && row.output_tokens.is_none() {
            return None;
        }
        let prompt = prompt_tokens(self.protocol, row.input_tokens, row.cache_read_tokens, row.cache_write_tokens);
        Some(prompt.unwrap_or(0).max(0) + row.output_tokens.unwrap_or(0).max(0))
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        if let Some(ledger) = self.ledger.take() {
            let settlement = self.returned();
            ledger.settle(settlement);
        }
    }
}
