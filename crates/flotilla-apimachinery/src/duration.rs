//! Ages as Kubernetes prints them: `duration.HumanDuration` of k8s.io/apimachinery, which kube-apiserver's
//! table printers and kubectl use for every AGE column (`5m10s`, `3h`, `4d2h`).

/// kubectl's age of an RFC 3339 timestamp relative to `now`: `<unknown>` when unparsable.
pub fn age_of(timestamp: &str, now: i64) -> String {
    match timestamp.parse::<jiff::Timestamp>() {
        Ok(t) => human_duration(now - t.as_second()),
        Err(_) => "<unknown>".to_string(),
    }
}

/// Upstream's `duration.HumanDuration` for a number of seconds.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".to_string();
    }
    if seconds < 0 {
        return "0s".to_string();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-11-22T10:00:00Z
    const NOW: i64 = 1_795_341_600;

    #[test]
    fn human_durations_match_kubectl() {
        let cases = [
            (-5, "<invalid>"),
            (-1, "0s"),
            (0, "0s"),
            (59, "59s"),
            (119, "119s"),
            (120, "2m"),
            (150, "2m30s"),
            (600, "10m"),
            (10_799, "179m"),
            (10_800, "3h"),
            (12_600, "3h30m"),
            (28_800, "8h"),
            (47 * 3600, "47h"),
            (48 * 3600, "2d"),
            (50 * 3600, "2d2h"),
            (8 * 86_400, "8d"),
            (730 * 86_400, "2y"),
            (740 * 86_400, "2y10d"),
            (9 * 365 * 86_400, "9y"),
        ];
        for (secs, want) in cases {
            assert_eq!(human_duration(secs), want, "{secs}");
        }
        assert_eq!(age_of("2026-11-22T09:55:00Z", NOW), "5m");
        assert_eq!(age_of("", NOW), "<unknown>");
    }
}
