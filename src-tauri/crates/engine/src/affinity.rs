//! The affinity setting of each connection (docs/design.md invariant 15): what a balanced
//! connection keeps on one key — a turn's calls (`turn`) or a conversation's turns while its
//! last call is younger than the window (`conversation`, the default, 10 minutes). Kept in
//! `settings` (`affinity:<connection id>` = `turn:<window ms>` or `conversation:<window ms>`;
//! the window is kept under `turn` too, so switching back restores it). Priority and legacy
//! connections ignore it. Selection under it is `switchyard_core::routing::affinity`.

use std::time::Duration;
use switchyard_core::states::AffinityMode;

use switchyard_core::routing::{Affinity, DEFAULT_AFFINITY_WINDOW};
use switchyard_core::InvalidInput;
use switchyard_store::settings;

use crate::engine::Engine;
use crate::error::EngineError;
use crate::views::{AffinityView, RoutingStatus};

/// Longest affinity window a user may set (one day).
const MAX_WINDOW_MIN: i64 = 24 * 60;

/// The stored setting: the mode and the window (also remembered under `turn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AffinitySetting {
    pub conversation: bool,
    pub window: Duration,
}

impl Default for AffinitySetting {
    fn default() -> Self {
        AffinitySetting { conversation: true, window: DEFAULT_AFFINITY_WINDOW }
    }
}

impl AffinitySetting {
    /// What selection runs under.
    pub fn affinity(self) -> Affinity {
        if self.conversation {
            Affinity::Conversation { window: self.window }
        } else {
            Affinity::Turn
        }
    }

    pub fn view(self) -> AffinityView {
        let minutes = i32::try_from(self.window.as_secs() / 60).unwrap_or(i32::MAX);
        AffinityView { mode: self.mode(), window_min: minutes }
    }

    fn mode(self) -> AffinityMode {
        if self.conversation {
            AffinityMode::Conversation
        } else {
            AffinityMode::Turn
        }
    }

    /// `turn:<ms>` / `conversation:<ms>`; anything else is the default.
    fn parse(stored: &str) -> Self {
        let parsed = stored.split_once(':').and_then(|(mode, ms)| {
            let window = Duration::from_millis(ms.parse::<u64>().ok()?);
            match mode {
                "turn" => Some(AffinitySetting { conversation: false, window }),
                "conversation" => Some(AffinitySetting { conversation: true, window }),
                _ => None,
            }
        });
        parsed.unwrap_or_default()
    }

    fn stored(self) -> String {
        format!("{}:{}", self.mode(), self.window.as_millis())
    }
}

fn key(connection_id: &str) -> String {
    format!("affinity:{connection_id}")
}

impl Engine {
    /// The affinity setting of `connection_id` (the default when unset or unreadable).
    pub(crate) async fn affinity_setting(&self, connection_id: &str) -> Result<AffinitySetting, EngineError> {
        let mut conn = self.store.acquire().await?;
        let stored = settings::get(&mut conn, &key(connection_id)).await?;
        Ok(stored.map(|(v, _)| AffinitySetting::parse(&v)).unwrap_or_default())
    }

    /// Sets the affinity of `slug` (`turn` or `conversation`) and, when given, its window in
    /// minutes (1 to 1440; otherwise the current window stays). A running relay uses it
    /// within a second. Returns the routing status with the new setting.
    pub async fn set_affinity(
        &self,
        slug: &str,
        mode: &str,
        window_min: Option<i64>,
    ) -> Result<RoutingStatus, EngineError> {
        let conversation = match mode {
            "conversation" => true,
            "turn" => false,
            other => {
                return Err(EngineError::Invalid(InvalidInput::new(
                    "affinity",
                    format!("'{other}' is not an affinity; use turn or conversation"),
                )))
            }
        };
        if let Some(m) = window_min.filter(|m| !(1..=MAX_WINDOW_MIN).contains(m)) {
            return Err(EngineError::Invalid(InvalidInput::new(
                "window_min",
                format!("must be between 1 and {MAX_WINDOW_MIN} minutes (got {m})"),
            )));
        }
        let connection = self.connection_by_slug(slug).await?;
        let key = key(&connection.id);
        let mut conn = self.store.acquire().await?;
        let current = settings::get(&mut conn, &key).await?;
        let before = current.as_ref().map(|(v, _)| AffinitySetting::parse(v)).unwrap_or_default();
        let window = window_min.and_then(|m| u64::try_from(m).ok()).map(|m| Duration::from_secs(m * 60));
        let next = AffinitySetting { conversation, window: window.unwrap_or(before.window) };
        settings::put(&mut conn, &key, &next.stored(), current.map(|(_, rev)| rev), self.now_ms()).await?;
        drop(conn);
        self.routing_status(slug).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_settings_read_back_and_garbage_is_the_default() {
        let turn = AffinitySetting { conversation: false, window: Duration::from_secs(300) };
        assert_eq!(AffinitySetting::parse(&turn.stored()), turn, "a stored setting reads back as written");
        assert_eq!(AffinitySetting::parse("sideways:5"), AffinitySetting::default(), "an unknown mode is the default");
        assert_eq!(AffinitySetting::parse("turn:-1"), AffinitySetting::default(), "a bad window is the default");
        assert_eq!(
            AffinitySetting::default().affinity(),
            Affinity::Conversation { window: DEFAULT_AFFINITY_WINDOW },
            "balanced connections keep conversations for 10 minutes unless told otherwise"
        );
        assert_eq!(turn.affinity(), Affinity::Turn, "turn affinity carries no window");
        assert_eq!(turn.view(), AffinityView { mode: AffinityMode::Turn, window_min: 5 }, "the view shows minutes");
    }
}
