//! The affinity setting of each connection (docs/design.md invariant 15): what a balanced
//! connection keeps on one key — a turn's calls (`turn`) or a conversation's turns while its
//! last call is younger than the window (`conversation`, the default, 10 minutes). Kept in
//! `settings` (`affinity:<connection id>` = `turn:<window ms>` or `conversation:<window ms>`;
//! the window is kept under `turn` too, so switching back restores it). Priority and legacy
//! connections ignore it. Selection under it is `switchyard_core::routing::affinity`.

use std::time::Duration;
use switchyard_core::states::AffinityMode;

use crate::settings::AffinitySetting;
use crate::settings::{Scope, AFFINITY};
use switchyard_core::routing::Affinity;
#[cfg(test)]
use switchyard_core::routing::DEFAULT_AFFINITY_WINDOW;

use crate::context::Context;
use crate::error::EngineError;
use crate::views::{AffinityView, RoutingStatus};

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
}

impl Context {
    /// The affinity setting of `connection_id` (the default when unset or unreadable).
    pub(crate) async fn affinity_setting(&self, connection_id: &str) -> Result<AffinitySetting, EngineError> {
        self.setting(&AFFINITY, Scope::Connection(connection_id)).await
    }

    /// Sets the affinity of `slug` (`turn` or `conversation`) and, when given, its window in
    /// minutes (1 to 1440; otherwise the current window stays). A running relay uses it
    /// within a second. Returns the routing status with the new setting.
    pub async fn set_affinity(
        &self,
        slug: &str,
        mode: AffinityMode,
        window_min: Option<i64>,
    ) -> Result<RoutingStatus, EngineError> {
        let conversation = mode == AffinityMode::Conversation;
        let window = window_min.map(|m| Duration::from_secs(u64::try_from(m).unwrap_or_default().saturating_mul(60)));
        let connection = self.connection_by_slug(slug).await?;
        self.update_setting(&AFFINITY, Scope::Connection(&connection.id), |before| AffinitySetting {
            conversation,
            window: window.unwrap_or(before.window),
        })
        .await?;
        let mut set = crate::config::audit::change("routing.affinity", slug, None, None);
        set.detail = Some(serde_json::json!({"mode": mode.as_str(), "window_min": window_min}));
        self.audit_now(set).await?;
        self.routing_status(slug).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Stored;

    #[test]
    fn stored_settings_read_back_and_garbage_is_the_default() {
        let turn = AffinitySetting { conversation: false, window: Duration::from_secs(300) };
        assert_eq!(AFFINITY.parse_stored(&turn.write()), turn, "a stored setting reads back as written");
        assert_eq!(AFFINITY.parse_stored("sideways:5"), AffinitySetting::default(), "an unknown mode is the default");
        assert_eq!(AFFINITY.parse_stored("turn:-1"), AffinitySetting::default(), "a bad window is the default");
        assert_eq!(AFFINITY.parse_stored("turn:0"), AffinitySetting::default(), "a window out of range is the default");
        assert_eq!(
            AffinitySetting::default().affinity(),
            Affinity::Conversation { window: DEFAULT_AFFINITY_WINDOW },
            "balanced connections keep conversations for 10 minutes unless told otherwise"
        );
        assert_eq!(turn.affinity(), Affinity::Turn, "turn affinity carries no window");
        assert_eq!(turn.view(), AffinityView { mode: AffinityMode::Turn, window_min: 5 }, "the view shows minutes");
    }
}
