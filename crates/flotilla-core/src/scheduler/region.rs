//! The group search behind the region spread algorithm (choosing the regions): a depth-first
//! enumeration of region subsets that satisfy the region and cluster constraints, and the choice among them.

/// One region: its name, its cluster count (value) and its score (weight).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Group {
    /// Region name.
    pub name: String,
    /// Number of feasible clusters in the region.
    pub value: i64,
    /// The region's score.
    pub weight: i64,
}

/// A recorded feasible subset.
#[derive(Clone, Debug)]
struct Path {
    id: usize,
    groups: Vec<usize>,
    weight: i64,
    value: i64,
}

/// Chooses regions: returns the names of the chosen subset, ordered by weight descending then name, or
/// nothing when no subset is feasible.
///
/// `min`/`max` bound the subset size (region constraint); `target` is the least total cluster count (the
/// cluster constraint's `minGroups`).
pub(super) fn select_groups(
    mut groups: Vec<Group>,
    min: i64,
    max: i64,
    target: i64,
) -> Vec<String> {
    if groups.is_empty() {
        return Vec::new();
    }
    groups.sort_by(|a, b| {
        a.value
            .cmp(&b.value)
            .then(b.weight.cmp(&a.weight))
            .then_with(|| a.name.cmp(&b.name))
    });
    let mut search = Search {
        groups: &groups,
        min,
        max,
        target,
        path: Vec::new(),
        found: Vec::new(),
        next_id: 0,
    };
    search.dfs(0, 0);
    let Some(best) = prioritize(search.found) else {
        return Vec::new();
    };
    best.groups
        .iter()
        .map(|&i| groups[i].name.clone())
        .collect()
}

struct Search<'a> {
    groups: &'a [Group],
    min: i64,
    max: i64,
    target: i64,
    path: Vec<usize>,
    found: Vec<Path>,
    next_id: usize,
}

impl Search<'_> {
    fn len(&self) -> i64 {
        self.path.len() as i64
    }

    fn dfs(&mut self, sum: i64, begin: usize) {
        if sum >= self.target && self.len() >= self.min && self.len() <= self.max {
            self.record();
            return;
        }
        if self.len() >= self.max {
            return;
        }
        // Karmada explores only the first branch at every level when every group is required.
        let only_first = self.groups.len() as i64 == self.min;
        for i in begin..self.groups.len() {
            self.path.push(i);
            self.dfs(sum + self.groups[i].value, i + 1);
            self.path.pop();
            if only_first {
                break;
            }
        }
    }

    fn record(&mut self) {
        self.next_id += 1;
        let mut groups = self.path.clone();
        let g = self.groups;
        groups.sort_by(|&a, &b| {
            g[b].weight
                .cmp(&g[a].weight)
                .then_with(|| g[a].name.cmp(&g[b].name))
        });
        self.found.push(Path {
            id: self.next_id,
            weight: groups.iter().map(|&i| g[i].weight).sum(),
            value: groups.iter().map(|&i| g[i].value).sum(),
            groups,
        });
    }
}

/// Highest weight, then highest value, then earliest; then any later path that is a strict prefix of the
/// pick (by group) replaces it.
fn prioritize(mut paths: Vec<Path>) -> Option<Path> {
    paths.sort_by(|a, b| {
        b.weight
            .cmp(&a.weight)
            .then(b.value.cmp(&a.value))
            .then(a.id.cmp(&b.id))
    });
    let mut iter = paths.into_iter();
    let mut best = iter.next()?;
    for path in iter {
        let is_prefix = path.groups.len() < best.groups.len()
            && path.groups.iter().zip(&best.groups).all(|(a, b)| a == b);
        if is_prefix {
            best = path;
        }
    }
    Some(best)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(name: &str, value: i64, weight: i64) -> Group {
        Group {
            name: name.into(),
            value,
            weight,
        }
    }

    #[test]
    fn picks_the_heaviest_feasible_set() {
        // Two regions needed, at least 3 clusters in total.
        let groups = vec![g("r1", 1, 1000), g("r2", 2, 3000), g("r3", 2, 2000)];
        assert_eq!(select_groups(groups, 2, 2, 3), ["r2", "r3"]);
    }

    #[test]
    fn no_feasible_set_and_zero_max() {
        assert!(select_groups(vec![g("r1", 1, 1)], 1, 1, 2).is_empty());
        assert!(
            select_groups(vec![g("r1", 5, 1)], 1, 0, 1).is_empty(),
            "maxGroups 0 selects nothing"
        );
        assert!(select_groups(Vec::new(), 1, 1, 1).is_empty());
    }

    #[test]
    fn single_region_enough() {
        let groups = vec![g("a", 3, 5000), g("b", 3, 6000)];
        assert_eq!(select_groups(groups, 1, 2, 1), ["b"]);
    }

    #[test]
    fn prefix_subset_replaces_longer_pick() {
        // With max 2, [b] and [a,b]... feasible paths stop at the first satisfying prefix, so the heaviest
        // recorded path wins unless a strict prefix of it was also recorded.
        let groups = vec![g("a", 1, 100), g("b", 1, 100)];
        assert_eq!(select_groups(groups, 1, 2, 2), ["a", "b"]);
    }

    #[test]
    fn all_groups_required_explores_first_branch_only() {
        let groups = vec![g("a", 1, 1), g("b", 1, 9)];
        assert_eq!(select_groups(groups, 2, 2, 1), ["b", "a"]);
    }
}
