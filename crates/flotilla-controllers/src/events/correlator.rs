//! What client-go's `EventCorrelator` does to Events before they are written, so Flotilla's Events read as
//! Karmada's (which records through client-go) do:
//!
//! - **Aggregation.** Events alike in all but their message (same reporter, object, type and reason) are
//!   counted per distinct message; from the [`AGGREGATE_MAX`]th distinct message seen within
//!   [`AGGREGATE_WINDOW`] on, they are folded into one Event whose message is
//!   `(combined from similar events): <latest message>`, so the latest cause is still shown.
//! - **Series.** An exact repeat (message included) within [`SERIES_WINDOW`] of the last one counts on the
//!   Event already written instead of writing a new one. Because the message is part of the key, a Warning
//!   whose cause changed starts a new Event with the new cause rather than counting under the old text.
//! - **Spam filter.** Each reporter may record [`SPAM_BURST`] Events per object at once, then one per
//!   [`SPAM_REFILL`]; the rest are dropped (the publisher logs dropped Warnings, so their cause is never lost).
//!
//! The correlator is pure bookkeeping with the time passed in; the publisher does the writing.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

/// How long an Event counts exact repeats (client-go's and kube-runtime's series window).
pub(crate) const SERIES_WINDOW: SignedDuration = SignedDuration::from_mins(6);
/// How many distinct messages of alike Events are kept apart before they are combined (client-go's default).
pub(crate) const AGGREGATE_MAX: usize = 10;
/// How long distinct messages are remembered for aggregation (client-go's default).
pub(crate) const AGGREGATE_WINDOW: SignedDuration = SignedDuration::from_mins(10);
/// Prefix of a combined Event's message (client-go's text, which users grep for).
pub(crate) const COMBINED_PREFIX: &str = "(combined from similar events): ";
/// Events one reporter may record about one object in a burst (client-go's default).
pub(crate) const SPAM_BURST: u32 = 25;
/// Time for one more Event once the burst is spent (client-go's default: a token per 5 minutes).
pub(crate) const SPAM_REFILL: SignedDuration = SignedDuration::from_mins(5);

/// The object an Event is about, as the correlator tells objects apart.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct Regarding {
    pub(crate) uid: Option<String>,
    pub(crate) kind: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
}

/// One Event as recorded, before correlation.
#[derive(Clone, Debug)]
pub(crate) struct Recorded {
    pub(crate) controller: Arc<str>,
    pub(crate) warning: bool,
    pub(crate) reason: String,
    pub(crate) note: String,
    pub(crate) regarding: Regarding,
}

/// Reporter, object, type and reason: what alike Events share.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct AggregateKey {
    controller: Arc<str>,
    warning: bool,
    reason: String,
    regarding: Regarding,
}

/// What makes two Events one series: everything but the time. Combined Events share one series whatever their
/// latest message (`combined`), as client-go keys them by the aggregate key.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) struct SeriesKey {
    aggregate: AggregateKey,
    note: Option<String>,
}

/// What to write for one recorded Event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Write a new Event with this note.
    Create { key: SeriesKey, note: String },
    /// Count a repeat on the series' Event: it has been seen `count` times, the last with this note.
    Repeat {
        key: SeriesKey,
        note: String,
        count: i32,
    },
    /// Drop it: the reporter recorded too many Events about the object.
    Drop,
}

struct Aggregate {
    messages: HashSet<String>,
    last_seen: Timestamp,
}

struct Series {
    count: i32,
    last_seen: Timestamp,
}

struct Bucket {
    tokens: f64,
    refilled: Timestamp,
}

/// client-go's correlation state for every Event the publisher has seen recently.
#[derive(Default)]
pub(crate) struct Correlator {
    aggregates: HashMap<AggregateKey, Aggregate>,
    series: HashMap<SeriesKey, Series>,
    buckets: HashMap<(Arc<str>, bool, Regarding), Bucket>,
}

impl Correlator {
    /// Decides what to write for `event` recorded at `now`.
    pub(crate) fn observe(&mut self, event: Recorded, now: Timestamp) -> Decision {
        let aggregate_key = AggregateKey {
            controller: event.controller.clone(),
            warning: event.warning,
            reason: event.reason,
            regarding: event.regarding.clone(),
        };
        let (key, note) = self.aggregate(aggregate_key, event.note, now);
        if !self.allow(&event.controller, event.warning, &event.regarding, now) {
            return Decision::Drop;
        }
        match self.series.get_mut(&key) {
            Some(series) if now < series.last_seen + SERIES_WINDOW => {
                series.count += 1;
                series.last_seen = now;
                Decision::Repeat {
                    count: series.count,
                    key,
                    note,
                }
            }
            _ => {
                self.series.insert(
                    key.clone(),
                    Series {
                        count: 1,
                        last_seen: now,
                    },
                );
                Decision::Create { key, note }
            }
        }
    }

    /// Forgets a series whose Event could not be written, so its next repeat writes a new one.
    pub(crate) fn forget(&mut self, key: &SeriesKey) {
        self.series.remove(key);
    }

    /// Whether `key`'s series is still counting repeats at `now`.
    pub(crate) fn is_live(&self, key: &SeriesKey, now: Timestamp) -> bool {
        self.series
            .get(key)
            .is_some_and(|s| now < s.last_seen + SERIES_WINDOW)
    }

    /// Drops what can no longer affect a decision: series and aggregates past their windows, and buckets full
    /// again. Called periodically rather than on every Event, so a burst does not scan everything each time.
    pub(crate) fn sweep(&mut self, now: Timestamp) {
        self.series.retain(|_, s| now < s.last_seen + SERIES_WINDOW);
        self.aggregates
            .retain(|_, a| now < a.last_seen + AGGREGATE_WINDOW);
        self.buckets
            .retain(|_, b| refilled_tokens(b, now) < f64::from(SPAM_BURST));
    }

    /// client-go's `EventAggregate`: the series key and note to use for an Event.
    fn aggregate(
        &mut self,
        key: AggregateKey,
        note: String,
        now: Timestamp,
    ) -> (SeriesKey, String) {
        let aggregate = self
            .aggregates
            .entry(key.clone())
            .or_insert_with(|| Aggregate {
                messages: HashSet::new(),
                last_seen: now,
            });
        if now >= aggregate.last_seen + AGGREGATE_WINDOW {
            aggregate.messages.clear();
        }
        aggregate.last_seen = now;
        aggregate.messages.insert(note.clone());
        if aggregate.messages.len() < AGGREGATE_MAX {
            return (
                SeriesKey {
                    aggregate: key,
                    note: Some(note.clone()),
                },
                note,
            );
        }
        // Keep the set bounded; which message leaves does not matter, only how many were seen.
        if let Some(any) = aggregate.messages.iter().next().cloned() {
            aggregate.messages.remove(&any);
        }
        (
            SeriesKey {
                aggregate: key,
                note: None,
            },
            format!("{COMBINED_PREFIX}{note}"),
        )
    }

    /// client-go's spam filter: a token bucket per reporter, object and type.
    fn allow(
        &mut self,
        controller: &Arc<str>,
        warning: bool,
        regarding: &Regarding,
        now: Timestamp,
    ) -> bool {
        let bucket = self
            .buckets
            .entry((controller.clone(), warning, regarding.clone()))
            .or_insert(Bucket {
                tokens: f64::from(SPAM_BURST),
                refilled: now,
            });
        bucket.tokens = refilled_tokens(bucket, now);
        bucket.refilled = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The tokens a bucket holds at `now`, refilled since it was last used and capped at the burst.
fn refilled_tokens(bucket: &Bucket, now: Timestamp) -> f64 {
    let elapsed = now.duration_since(bucket.refilled).as_secs_f64().max(0.0);
    (bucket.tokens + elapsed / SPAM_REFILL.as_secs_f64()).min(f64::from(SPAM_BURST))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::UNIX_EPOCH + SignedDuration::from_secs(1_700_000_000 + seconds)
    }

    fn event(object: &str, warning: bool, reason: &str, note: &str) -> Recorded {
        Recorded {
            controller: Arc::from("flotilla-detector"),
            warning,
            reason: reason.into(),
            note: note.into(),
            regarding: Regarding {
                uid: Some(format!("uid-{object}")),
                kind: Some("Deployment".into()),
                namespace: Some("default".into()),
                name: Some(object.into()),
            },
        }
    }

    fn note(decision: &Decision) -> &str {
        match decision {
            Decision::Create { note, .. } | Decision::Repeat { note, .. } => note,
            Decision::Drop => "<dropped>",
        }
    }

    #[test]
    fn exact_repeats_count_on_one_event_and_a_new_message_starts_another() {
        let mut c = Correlator::default();
        let failed = |n: &str| event("web", true, "GetReplicasFailed", n);
        let first = c.observe(failed("CPU deadline of 1s exceeded"), at(0));
        assert!(matches!(first, Decision::Create { .. }));
        for (i, t) in [1, 2].into_iter().enumerate() {
            match c.observe(failed("CPU deadline of 1s exceeded"), at(t)) {
                Decision::Repeat { count, note, .. } => {
                    assert_eq!(count, i32::try_from(i).unwrap_or_default() + 2);
                    assert_eq!(note, "CPU deadline of 1s exceeded");
                }
                other => panic!("expected a repeat, got {other:?}"),
            }
        }
        // The cause changed: a new Event with the new message, not a count on the old one.
        let changed = c.observe(failed("connection refused"), at(3));
        assert!(matches!(changed, Decision::Create { .. }), "{changed:?}");
        assert_eq!(note(&changed), "connection refused");
        // And the old cause, should it come back, still counts on its own Event.
        let back = c.observe(failed("CPU deadline of 1s exceeded"), at(4));
        assert!(
            matches!(back, Decision::Repeat { count: 4, .. }),
            "{back:?}"
        );
    }

    #[test]
    fn a_repeat_after_the_series_window_writes_a_new_event() {
        let mut c = Correlator::default();
        let e = || event("web", false, "SyncSucceed", "applied");
        assert!(matches!(c.observe(e(), at(0)), Decision::Create { .. }));
        assert!(matches!(
            c.observe(e(), at(60)),
            Decision::Repeat { count: 2, .. }
        ));
        let later = at(60) + SERIES_WINDOW;
        assert!(matches!(c.observe(e(), later), Decision::Create { .. }));
    }

    #[test]
    fn the_tenth_distinct_message_on_is_combined_into_one_event_with_the_latest_message() {
        let mut c = Correlator::default();
        let failed = |i: usize| event("web", true, "SyncFailed", &format!("cause {i}"));
        for i in 0..AGGREGATE_MAX - 1 {
            let d = c.observe(failed(i), at(i64::try_from(i).unwrap_or_default()));
            assert_eq!(note(&d), format!("cause {i}"));
            assert!(matches!(d, Decision::Create { .. }));
        }
        let tenth = c.observe(failed(9), at(20));
        assert_eq!(note(&tenth), format!("{COMBINED_PREFIX}cause 9"));
        assert!(matches!(tenth, Decision::Create { .. }));
        let eleventh = c.observe(failed(10), at(21));
        assert_eq!(note(&eleventh), format!("{COMBINED_PREFIX}cause 10"));
        assert!(
            matches!(eleventh, Decision::Repeat { count: 2, .. }),
            "{eleventh:?}"
        );
        // Another object, or another reason, is not combined with these.
        let other = c.observe(event("api", true, "SyncFailed", "cause 11"), at(22));
        assert_eq!(note(&other), "cause 11");
        let other_reason = c.observe(event("web", true, "ReflectStatusFailed", "x"), at(22));
        assert_eq!(note(&other_reason), "x");
    }

    #[test]
    fn distinct_messages_are_forgotten_after_the_aggregation_window() {
        let mut c = Correlator::default();
        for i in 0..AGGREGATE_MAX - 1 {
            c.observe(
                event("web", true, "SyncFailed", &format!("cause {i}")),
                at(0),
            );
        }
        let later = at(0) + AGGREGATE_WINDOW;
        let d = c.observe(event("web", true, "SyncFailed", "cause new"), later);
        assert_eq!(note(&d), "cause new");
    }

    #[test]
    fn the_spam_filter_lets_a_burst_through_then_one_event_per_refill() {
        let mut c = Correlator::default();
        let e = |i: u32| event("web", false, "ReflectStatusSucceed", &format!("n{}", i % 3));
        for i in 0..SPAM_BURST {
            assert_ne!(c.observe(e(i), at(0)), Decision::Drop, "event {i}");
        }
        assert_eq!(c.observe(e(0), at(1)), Decision::Drop);
        // Another object, and Warnings about the same object, have buckets of their own.
        assert_ne!(
            c.observe(event("api", false, "ReflectStatusSucceed", "n"), at(1)),
            Decision::Drop
        );
        assert_ne!(
            c.observe(event("web", true, "ReflectStatusFailed", "n"), at(1)),
            Decision::Drop
        );
        let refill = SPAM_REFILL.as_secs();
        assert_ne!(c.observe(e(1), at(refill + 1)), Decision::Drop);
        assert_eq!(c.observe(e(2), at(refill + 2)), Decision::Drop);
    }

    #[test]
    fn sweeping_keeps_live_state_and_drops_the_rest() {
        let mut c = Correlator::default();
        let e = || event("web", false, "SyncSucceed", "applied");
        let Decision::Create { key, .. } = c.observe(e(), at(0)) else {
            panic!("expected a new Event")
        };
        c.sweep(at(1));
        assert!(c.is_live(&key, at(1)));
        assert!(matches!(
            c.observe(e(), at(2)),
            Decision::Repeat { count: 2, .. }
        ));
        c.sweep(at(2) + AGGREGATE_WINDOW);
        assert!(c.series.is_empty() && c.aggregates.is_empty());
        c.sweep(at(2) + SPAM_REFILL * i32::try_from(SPAM_BURST).unwrap_or_default());
        assert!(c.buckets.is_empty());
        c.forget(&key);
        assert!(matches!(
            c.observe(e(), at(10_000)),
            Decision::Create { .. }
        ));
    }
}
