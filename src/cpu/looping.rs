//! Mirror of `shaders/shared/looping.wgsl`: a state's local time advanced and wrapped or clamped
//! by its loop mode.

use super::ticks::{period_ticks, wrap_ticks};
use crate::layout::{LOOP_ONCE, LOOP_REPEAT, TICK_LIMIT, Ticks};

/// A clock reading: the new local time, the time sampled, the normalized time. WGSL `ClipTime`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClipTime {
    /// Local time within the current loop (wrapped or clamped by the loop mode).
    pub time: Ticks,
    /// Loops completed.
    pub loops: u32,
    /// Time within the clip in seconds (for a tree: the phase).
    pub sample_time: f32,
    /// `sample_time / duration`.
    pub phase: f32,
}

/// Advances a local time (`time` within loop `loops`) by `delta` ticks on a state of `period`
/// ticks (`duration` seconds or cycles) and applies the loop mode: `LOOP_ONCE` clamps to
/// `[0, period]`; `LOOP_REPEAT` counts loops and stops at the start of the first or the end of
/// the last; `LOOP_FOREVER` wraps and counts loops modulo 2³². WGSL `advance_clip_time`.
#[must_use]
pub fn advance_clip_time(
    time: Ticks,
    loops: u32,
    delta: i64,
    loop_mode: u32,
    loop_count: u32,
    duration: f32,
    period: i64,
) -> ClipTime {
    // |time| and |delta| are at most 2⁶¹: the sum cannot overflow.
    let x = time.get().clamp(-TICK_LIMIT, TICK_LIMIT) + delta.clamp(-TICK_LIMIT, TICK_LIMIT);
    let (t, loops) = if loop_mode == LOOP_ONCE {
        (x.clamp(0, period), loops)
    } else {
        let (q, r) = wrap_ticks(x, period);
        if loop_mode == LOOP_REPEAT {
            let n = i64::from(loop_count.max(1));
            let total = i64::from(loops) + q;
            if total >= n || i64::from(loops) >= n {
                (period, (n - 1) as u32)
            } else if total < 0 {
                (0, 0)
            } else {
                (r, total as u32)
            }
        } else {
            (r, loops.wrapping_add(q as u32))
        }
    };
    let time = Ticks::new(t);
    let sample_time = time.to_f32().clamp(0.0, duration);
    ClipTime {
        time,
        loops,
        sample_time,
        phase: sample_time / duration,
    }
}

/// Where a state starts playing from `start` (seconds, or a phase for a tree) with no time
/// advanced: the start wrapped or clamped by the loop mode.
#[must_use]
pub fn start_clip_time(start: f32, loop_mode: u32, loop_count: u32, duration: f32) -> ClipTime {
    frame_start_time(
        Ticks::from_f32(start),
        0,
        true,
        loop_mode,
        loop_count,
        duration,
        period_ticks(duration),
    )
}

/// Where a state stands before its frame's step: as it is, or, when it `started` this frame, at
/// its start wrapped or clamped by the loop mode (as [`start_clip_time`]), so that a reverse clip
/// started past its end takes its first step from the end, and a forward one started before 0
/// from 0. WGSL `frame_start_time`.
#[must_use]
pub(crate) fn frame_start_time(
    time: Ticks,
    loops: u32,
    started: bool,
    loop_mode: u32,
    loop_count: u32,
    duration: f32,
    period: i64,
) -> ClipTime {
    if started {
        return advance_clip_time(time, loops, 0, loop_mode, loop_count, duration, period);
    }
    ClipTime {
        time,
        loops,
        sample_time: 0.0,
        phase: 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::ticks::ratio_ticks;
    use crate::layout::{LOOP_FOREVER, TICK_BITS};

    fn run(rate: f32, loop_mode: u32, loop_count: u32, start: f32, steps: &[f32]) -> ClipTime {
        let mut c = ClipTime {
            time: Ticks::from_f32(start),
            ..Default::default()
        };
        for &dt in steps {
            let delta = ratio_ticks(rate, dt, 1.0);
            c = advance_clip_time(c.time, c.loops, delta, loop_mode, loop_count, 2.0, period_ticks(2.0));
        }
        c
    }

    #[test]
    fn loop_forever_wraps_both_ways() {
        let c = run(1.0, LOOP_FOREVER, 0, 0.0, &[1.5, 1.0]);
        assert!(
            (c.sample_time - 0.5).abs() < 1e-6 && (c.phase - 0.25).abs() < 1e-6 && c.loops == 1,
            "{c:?}"
        );
        let c = run(-1.0, LOOP_FOREVER, 0, 0.5, &[1.0]);
        assert!(
            (c.sample_time - 1.5).abs() < 1e-6 && c.loops == u32::MAX,
            "reverse play wraps to the end, one loop back: {c:?}"
        );
        let c = run(3.0, LOOP_FOREVER, 0, 0.0, &[33.5]);
        assert!(
            c.time.to_f32() < 2.0 && (c.sample_time - 0.5).abs() < 1e-6 && c.loops == 50,
            "time stays wrapped: {c:?}"
        );
    }

    #[test]
    fn play_once_clamps_and_reverse_play_stops_at_zero() {
        let c = run(1.0, LOOP_ONCE, 0, 0.0, &[1.5, 1.5]);
        assert_eq!((c.time.to_f32(), c.sample_time, c.phase), (2.0, 2.0, 1.0));
        let c = run(-2.0, LOOP_ONCE, 0, 1.0, &[0.25]);
        assert_eq!(c.sample_time, 0.5);
        let c = run(-2.0, LOOP_ONCE, 0, 1.0, &[1.0]);
        assert_eq!(c.sample_time, 0.0);
        let c = run(0.0, LOOP_ONCE, 0, 1.25, &[1.0, 1.0]);
        assert_eq!(c.sample_time, 1.25, "rate 0 pauses");
    }

    #[test]
    fn finite_loop_count_stops_on_the_last_frame() {
        let c = run(1.0, LOOP_REPEAT, 3, 0.0, &[2.5]);
        assert!((c.sample_time - 0.5).abs() < 1e-6 && c.loops == 1, "second loop: {c:?}");
        let c = run(1.0, LOOP_REPEAT, 3, 0.0, &[5.5]);
        assert!((c.sample_time - 1.5).abs() < 1e-6 && c.loops == 2, "third loop: {c:?}");
        let c = run(1.0, LOOP_REPEAT, 3, 0.0, &[6.5, 3.0]);
        assert_eq!((c.loops, c.sample_time), (2, 2.0), "holds the end after N loops");
        let c = run(1.0, LOOP_REPEAT, 3, 0.0, &[6.5, -1.0, -0.5]);
        assert!(
            (c.sample_time - 0.5).abs() < 1e-6 && c.loops == 2,
            "backwards from the end: {c:?}"
        );
        let c = run(-1.0, LOOP_REPEAT, 3, 1.0, &[5.0]);
        assert_eq!((c.loops, c.sample_time), (0, 0.0), "stops at the start");
    }

    /// One simulated day at 60 frames a second through the clock stage's arithmetic, against an
    /// f64 clock fed the same rate and dt: phase error below 1e-4 s and exact loop counts. (The
    /// old f32 clock drifted by 0.025 s on a 1 s loop and 0.92 s on a 37.6 s loop.)
    #[test]
    fn a_day_at_60_fps_does_not_drift() {
        const FRAMES: u64 = 24 * 3600 * 60;
        let dt = 1.0f32 / 60.0;
        // (duration, rate, loop mode, loop count)
        let cases = [
            (1.0f32, 1.0f32, LOOP_FOREVER, 0u32),
            (0.71, 1.0, LOOP_FOREVER, 0),
            (37.6, 1.0, LOOP_FOREVER, 0),
            (0.71, -0.9, LOOP_FOREVER, 0),
            (1.3, 1.37, LOOP_FOREVER, 0),
            (0.71, 1.0, LOOP_REPEAT, 100_000),
        ];
        for (duration, rate, mode, count) in cases {
            let period = period_ticks(duration);
            let delta = ratio_ticks(rate, dt, 1.0);
            let (mut time, mut loops) = (Ticks::default(), 0u32);
            for _ in 0..FRAMES {
                let ct = advance_clip_time(time, loops, delta, mode, count, duration, period);
                (time, loops) = (ct.time, ct.loops);
            }
            let total = f64::from(rate) * f64::from(dt) * FRAMES as f64;
            let d = f64::from(duration);
            let (want_loops, want_time) = if mode == LOOP_REPEAT && total >= d * f64::from(count) {
                (i64::from(count) - 1, d)
            } else {
                ((total / d).floor() as i64, total.rem_euclid(d))
            };
            let got = time.get() as f64 / (1u64 << TICK_BITS) as f64;
            assert!(
                (got - want_time).abs() < 1e-4,
                "{duration} s at rate {rate}: {got} vs {want_time}"
            );
            assert_eq!(loops, want_loops as u32, "{duration} s at rate {rate}: loops");
        }
    }

    /// A blend tree's phase over a day, advanced by `rate · dt / D` each frame, for a given `D` (the
    /// tree's own f32 `D` against f64 weights: `cpu::clock`'s synced-tree test).
    #[test]
    fn a_tree_phase_does_not_drift_over_a_day() {
        const FRAMES: u64 = 24 * 3600 * 60;
        let (dt, rate, d) = (1.0f32 / 60.0, 1.1f32, 0.93f32);
        let delta = ratio_ticks(rate, dt, d);
        let (mut time, mut loops) = (Ticks::default(), 0u32);
        for _ in 0..FRAMES {
            let ct = advance_clip_time(time, loops, delta, LOOP_FOREVER, 0, 1.0, 1 << TICK_BITS);
            (time, loops) = (ct.time, ct.loops);
        }
        let cycles = f64::from(rate) * f64::from(dt) / f64::from(d) * FRAMES as f64;
        let got = time.get() as f64 / (1u64 << TICK_BITS) as f64;
        // In seconds of the synchronized clips (D per cycle).
        assert!(
            ((got - cycles.fract()) * f64::from(d)).abs() < 1e-4,
            "{got} vs {}",
            cycles.fract()
        );
        assert_eq!(u64::from(loops), cycles.floor() as u64 % (1 << 32));
    }
}
