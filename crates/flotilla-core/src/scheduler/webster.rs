//! Webster (Sainte-Laguë) apportionment, the divider behind every weighted replica strategy (static weights,
//! dynamic weights, Aggregated).
//!
//! Seats go one at a time to the party with the greatest `votes / (2 * seats + 1)`, computed in IEEE-754
//! double precision as Go does. Ties go to the party with fewer seats, then by name: ascending when the
//! template UID is empty or its FNV-1a-32 is even, descending when it is odd. The order is total, so a heap
//! gives exactly the sequential result.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap};

use crate::names::fnv1a_32;

/// Whether equal-priority, equal-seat ties go to the larger name (FNV-1a-32 of the UID is odd).
pub fn tie_break_descending(uid: &str) -> bool {
    !uid.is_empty() && fnv1a_32(uid.as_bytes()) & 1 == 1
}

#[derive(Debug)]
struct Party<'a> {
    name: &'a str,
    votes: i64,
    seats: i32,
    descending: bool,
}

impl Party<'_> {
    fn priority(&self) -> f64 {
        // Go computes `float64(votes) / float64(2*seats+1)`; the int32 doubling cannot overflow for any
        // seat count an int32 replica total produces.
        #[allow(clippy::cast_precision_loss)]
        let votes = self.votes as f64;
        votes / f64::from(2 * self.seats + 1)
    }
}

impl Ord for Party<'_> {
    /// Greater means "gets the next seat".
    fn cmp(&self, other: &Self) -> Ordering {
        let (a, b) = (self.priority(), other.priority());
        if a != b {
            // Priorities are finite (the divisor is at least 1), so they are always comparable.
            return a.partial_cmp(&b).unwrap_or(Ordering::Equal);
        }
        other.seats.cmp(&self.seats).then_with(|| {
            if self.descending {
                self.name.cmp(other.name)
            } else {
                other.name.cmp(self.name)
            }
        })
    }
}

impl PartialOrd for Party<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Party<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Party<'_> {}

/// Allocates `seats` new seats among the parties of `votes` and `initial` (a party only in `initial` has no
/// votes; one only in `votes` starts with no seats), as Karmada's `AllocateWebsterSeats`.
///
/// Guarantees: the result lists every party once, sorted by name, with its initial seats plus the seats it
/// won; the won seats sum to `seats` (when there is at least one party). Deterministic for a given `uid`.
pub fn allocate(
    seats: i32,
    votes: &[(&str, i64)],
    initial: &[(&str, i32)],
    uid: &str,
) -> Vec<(String, i32)> {
    let descending = tie_break_descending(uid);
    let mut parties: BTreeMap<&str, (i64, i32)> = BTreeMap::new();
    for (name, s) in initial {
        parties.insert(name, (0, *s));
    }
    for (name, v) in votes {
        parties.entry(name).or_insert((0, 0)).0 = *v;
    }
    let mut heap: BinaryHeap<Party<'_>> = parties
        .iter()
        .map(|(name, (votes, seats))| Party {
            name,
            votes: *votes,
            seats: *seats,
            descending,
        })
        .collect();
    for _ in 0..seats.max(0) {
        match heap.peek_mut() {
            Some(mut best) => best.seats += 1,
            None => break,
        }
    }
    let mut out: Vec<(String, i32)> = heap
        .into_iter()
        .map(|p| (p.name.to_owned(), p.seats))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alloc(seats: i32, votes: &[(&str, i64)], uid: &str) -> Vec<(String, i32)> {
        allocate(seats, votes, &[], uid)
    }

    fn pairs(v: &[(&str, i32)]) -> Vec<(String, i32)> {
        v.iter().map(|(n, s)| ((*n).to_owned(), *s)).collect()
    }

    #[test]
    fn uid_parity_decides_name_order() {
        assert!(!tie_break_descending(""));
        let even = (0..)
            .map(|i| format!("uid-{i}"))
            .find(|u| fnv1a_32(u.as_bytes()) & 1 == 0)
            .unwrap();
        let odd = (0..)
            .map(|i| format!("uid-{i}"))
            .find(|u| fnv1a_32(u.as_bytes()) & 1 == 1)
            .unwrap();
        assert!(!tie_break_descending(&even));
        assert!(tie_break_descending(&odd));
        let votes = [("A", 1), ("B", 1), ("C", 1)];
        assert_eq!(
            alloc(10, &votes, &even),
            pairs(&[("A", 4), ("B", 3), ("C", 3)])
        );
        assert_eq!(
            alloc(10, &votes, &odd),
            pairs(&[("A", 3), ("B", 3), ("C", 4)])
        );
        assert_eq!(
            alloc(10, &votes, ""),
            pairs(&[("A", 4), ("B", 3), ("C", 3)])
        );
    }

    #[test]
    fn fewer_seats_win_equal_priorities() {
        // Third seat: A(3/3) and C(1/1) both have priority 1.0; C has fewer seats.
        let got = alloc(5, &[("A", 3), ("B", 2), ("C", 1)], "");
        assert_eq!(got, pairs(&[("A", 2), ("B", 2), ("C", 1)]));
    }

    #[test]
    fn initial_seats_and_vote_less_parties() {
        let got = allocate(3, &[("A", 1)], &[("B", 5)], "");
        assert_eq!(got, pairs(&[("A", 3), ("B", 5)]));
        assert!(allocate(3, &[], &[], "").is_empty());
        assert_eq!(alloc(0, &[("A", 1)], ""), pairs(&[("A", 0)]));
    }
}
