//! The playbook: the live key scripts and where each sequence stands. It turns one hit
//! (key + listing or model call) into a [`Plan`] to answer with, or a [`Fault`].

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use crate::cache::CacheScope;
use crate::fault::Fault;
use crate::quota::QuotaStep;
use crate::script::{Behaviour, KeyScript, ScriptFile, ToolCall, Wire, DEFAULT_REPLY};
use crate::subscription::Subscription;

/// What a hit asks for.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Call<'a> {
    /// `GET /v1/models`.
    Listing,
    /// A call naming a model (completions, messages, token counting).
    Model(&'a str),
}

/// How to answer a hit that does not fail.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// Wait before answering (`slow`).
    pub delay: Option<Duration>,
    /// Drop the connection after this many content chunks (`stream_dies_after`).
    pub dies_after: Option<usize>,
    /// Send the dialect's error event after this many content chunks (`stream_error`).
    pub stream_error: Option<usize>,
    pub reply: String,
    /// How the answer is written.
    pub wire: Wire,
    /// The tool to call, if the request offers it and holds no result yet.
    pub tool: Option<ToolCall>,
    /// The key's models, for listing.
    pub models: Vec<String>,
    /// Limit headers for a successful model call (scripted `quota`).
    pub quota: Option<QuotaStep>,
    /// The key's account when it enforces account-bound state (scripted `account` or
    /// `reasoning`); `None`: nothing is checked or remembered.
    pub account: Option<String>,
    /// Answers carry account-bound reasoning (scripted `reasoning`).
    pub reasoning: bool,
    /// The prompt cache Anthropic answers are charged to (scripted `prompt_cache`).
    pub prompt_cache: Option<CacheScope>,
    /// Subscription window headers for a successful model call (scripted `subscription`).
    pub subscription: Option<Subscription>,
}

impl Plan {
    /// Sleeps for the scripted delay, if any.
    pub async fn wait(&self) {
        if let Some(delay) = self.delay {
            tokio::time::sleep(delay).await;
        }
    }
}

/// Which script entry a behaviour came from; sequences advance per slot.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Slot {
    Listing,
    Default,
    Model(String),
}

#[derive(Debug, Default)]
struct Inner {
    keys: HashMap<String, KeyScript>,
    cursors: HashMap<(String, Slot), usize>,
    /// Successful model calls per key with a scripted quota.
    quota_calls: HashMap<String, u64>,
}

/// The key scripts and their sequence positions.
#[derive(Debug, Default)]
pub(crate) struct Playbook {
    inner: Mutex<Inner>,
}

impl Playbook {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sets (or replaces) a key's script; its sequences start over.
    pub fn set_key(&self, key: &str, script: KeyScript) {
        let mut inner = self.lock();
        inner.cursors.retain(|(k, _), _| k != key);
        inner.quota_calls.remove(key);
        inner.keys.insert(key.to_owned(), script);
    }

    /// Forgets a key: it then answers 401.
    pub fn remove_key(&self, key: &str) {
        let mut inner = self.lock();
        inner.cursors.retain(|(k, _), _| k != key);
        inner.quota_calls.remove(key);
        inner.keys.remove(key);
    }

    /// Adds every key of a script file.
    pub fn load(&self, file: ScriptFile) {
        for (key, script) in file.keys {
            self.set_key(&key, script);
        }
    }

    /// Fails unless `key` is present and known (checked before the request body is read,
    /// as providers do).
    pub fn authenticate(&self, key: Option<&str>) -> Result<(), Fault> {
        let key = key.ok_or(Fault::MissingKey)?;
        if self.lock().keys.contains_key(key) {
            Ok(())
        } else {
            Err(Fault::InvalidKey { key: key.to_owned() })
        }
    }

    /// Plays one hit: picks the behaviour for the key and call (advancing a sequence by one
    /// step) and turns it into a plan or a fault. A model outside the key's list fails with
    /// model-not-found without consuming a step. A successful model call of a key with a
    /// scripted quota takes the next quota step.
    pub fn play(&self, key: Option<&str>, call: Call<'_>) -> Result<Plan, Fault> {
        self.authenticate(key)?;
        let key = key.unwrap_or_default();
        let mut inner = self.lock();
        let Inner { keys, cursors, quota_calls } = &mut *inner;
        let script = keys.get(key).ok_or_else(|| Fault::InvalidKey { key: key.to_owned() })?;
        let (slot, behaviour) = match call {
            Call::Listing => match &script.listing {
                Some(b) => (Slot::Listing, b),
                None => (Slot::Default, &script.behaviour),
            },
            Call::Model(model) => {
                if !script.models.iter().any(|m| m == model) {
                    return Err(Fault::ModelNotFound { model: model.to_owned() });
                }
                match script.per_model.get(model) {
                    Some(b) => (Slot::Model(model.to_owned()), b),
                    None => (Slot::Default, &script.behaviour),
                }
            }
        };
        let step = match behaviour {
            Behaviour::Sequence(_) => {
                let steps = behaviour.steps();
                let cursor = cursors.entry((key.to_owned(), slot)).or_insert(0);
                let step = steps[(*cursor).min(steps.len() - 1)].clone();
                *cursor = cursor.saturating_add(1);
                step
            }
            other => other.clone(),
        };
        let plan = Plan {
            delay: None,
            dies_after: None,
            stream_error: None,
            reply: script.reply.clone().unwrap_or_else(|| DEFAULT_REPLY.to_owned()),
            wire: script.wire.unwrap_or_default(),
            tool: script.tool.clone(),
            models: script.models.clone(),
            quota: None,
            account: (script.account.is_some() || script.reasoning)
                .then(|| script.account.clone().unwrap_or_else(|| key.to_owned())),
            reasoning: script.reasoning,
            prompt_cache: script.prompt_cache.as_ref().map(|cache| CacheScope {
                account: cache.account.clone().or_else(|| script.account.clone()).unwrap_or_else(|| key.to_owned()),
                ttl: Duration::from_secs(cache.ttl_secs),
                scale: cache.scale.max(1),
            }),
            subscription: match call {
                Call::Model(_) => script.subscription.clone(),
                Call::Listing => None,
            },
        };
        let quota = script.quota;
        let mut played = apply_step(step, key, call, plan);
        if let (Ok(plan), Call::Model(_), Some(quota)) = (&mut played, call, quota) {
            let calls = quota_calls.entry(key.to_owned()).or_insert(0);
            plan.quota = Some(quota.step(*calls));
            *calls = calls.saturating_add(1);
        }
        played
    }
}

/// One concrete (non-sequence) step applied to a call.
fn apply_step(step: Behaviour, key: &str, call: Call<'_>, plan: Plan) -> Result<Plan, Fault> {
    let listing = matches!(call, Call::Listing);
    match step {
        Behaviour::Ok | Behaviour::Sequence(_) => Ok(plan),
        Behaviour::Slow { ms } => Ok(Plan { delay: Some(Duration::from_millis(ms)), ..plan }),
        Behaviour::StreamDiesAfter { chunks } if !listing => Ok(Plan { dies_after: Some(chunks), ..plan }),
        Behaviour::StreamDiesAfter { .. } => Ok(plan),
        Behaviour::StreamError { after_chunks } if !listing => Ok(Plan { stream_error: Some(after_chunks), ..plan }),
        Behaviour::StreamError { .. } => Ok(plan),
        Behaviour::ListingUnsupported if listing => Err(Fault::ListingUnsupported),
        Behaviour::ListingUnsupported => Ok(plan),
        Behaviour::ModelForbidden => match call {
            Call::Listing => Ok(plan),
            Call::Model(model) => Err(Fault::ModelForbidden { model: model.to_owned() }),
        },
        Behaviour::RateLimited { retry_after_secs } => Err(Fault::RateLimited { retry_after_secs }),
        Behaviour::QuotaExhausted => Err(Fault::QuotaExhausted),
        Behaviour::Unauthorized => Err(Fault::InvalidKey { key: key.to_owned() }),
        Behaviour::ServerError => Err(Fault::ServerError),
        Behaviour::Overloaded => Err(Fault::Overloaded),
        Behaviour::UsageLimit { .. }
        | Behaviour::ClientNotAllowed
        | Behaviour::ExtraUsageRequired
        | Behaviour::Gemini(_)
            if listing =>
        {
            Ok(plan)
        }
        Behaviour::UsageLimit { window, reset } => Err(Fault::UsageLimit { window, reset }),
        Behaviour::ClientNotAllowed => Err(Fault::ClientNotAllowed),
        Behaviour::ExtraUsageRequired => Err(Fault::ExtraUsageRequired),
        Behaviour::Gemini(refusal) => Err(Fault::Gemini(refusal)),
    }
}
