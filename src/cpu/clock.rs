//! Mirror of `shaders/clock.wgsl`.

use crate::layout::{GpuClock, GpuFrame, GpuInstance, LOOP_ONCE, LOOP_REPEAT};
use crate::library::AnimationLibrary;

/// Advances one clock by `rate * dt` and applies the loop mode. WGSL `advance_clock`.
#[must_use]
pub fn advance_clock(inst: &GpuInstance, clock: &GpuClock, duration: f32, dt: f32) -> GpuClock {
    let mut t = clock.time + inst.rate * dt;
    let mut s;
    if inst.loop_mode == LOOP_ONCE {
        t = t.clamp(0.0, duration);
        s = t;
    } else if inst.loop_mode == LOOP_REPEAT {
        let end = duration * inst.loop_count as f32;
        t = t.clamp(0.0, end);
        if t >= end {
            s = duration;
        } else {
            s = t - duration * (t / duration).floor();
        }
    } else {
        t -= duration * (t / duration).floor();
        s = t;
    }
    s = s.clamp(0.0, duration);
    GpuClock {
        time: t,
        sample_time: s,
        phase: s / duration,
        _pad: 0,
    }
}

/// Stage `clock`: one invocation per instance.
pub fn clock(lib: &AnimationLibrary, frame: &GpuFrame, instances: &[GpuInstance], clocks: &mut [GpuClock]) {
    for i in 0..frame.instance_count as usize {
        let inst = &instances[i];
        clocks[i] = advance_clock(inst, &clocks[i], lib.clips[inst.clip as usize].duration, frame.dt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LOOP_FOREVER;
    use crate::math::Affine;

    fn inst(rate: f32, loop_mode: u32, loop_count: u32) -> GpuInstance {
        GpuInstance {
            world: Affine::IDENTITY,
            clip: 0,
            skeleton: 0,
            joint_offset: 0,
            joint_count: 1,
            rate,
            loop_mode,
            loop_count,
            tint: 0,
        }
    }

    fn run(i: &GpuInstance, start: f32, steps: &[f32]) -> GpuClock {
        let mut c = GpuClock {
            time: start,
            ..Default::default()
        };
        for &dt in steps {
            c = advance_clock(i, &c, 2.0, dt);
        }
        c
    }

    #[test]
    fn loop_forever_wraps_both_ways() {
        let c = run(&inst(1.0, LOOP_FOREVER, 0), 0.0, &[1.5, 1.0]);
        assert!(
            (c.sample_time - 0.5).abs() < 1e-6 && (c.phase - 0.25).abs() < 1e-6,
            "{c:?}"
        );
        let c = run(&inst(-1.0, LOOP_FOREVER, 0), 0.5, &[1.0]);
        assert!(
            (c.sample_time - 1.5).abs() < 1e-6,
            "reverse play wraps to the end: {c:?}"
        );
        let c = run(&inst(3.0, LOOP_FOREVER, 0), 0.0, &[100.0 / 3.0]);
        assert!(
            c.time < 2.0 && (c.sample_time - 0.0).abs() < 1e-4,
            "time stays wrapped: {c:?}"
        );
    }

    #[test]
    fn play_once_clamps_and_reverse_play_stops_at_zero() {
        let c = run(&inst(1.0, LOOP_ONCE, 0), 0.0, &[1.5, 1.5]);
        assert_eq!((c.time, c.sample_time, c.phase), (2.0, 2.0, 1.0));
        let c = run(&inst(-2.0, LOOP_ONCE, 0), 1.0, &[0.25]);
        assert_eq!(c.sample_time, 0.5);
        let c = run(&inst(-2.0, LOOP_ONCE, 0), 1.0, &[1.0]);
        assert_eq!(c.sample_time, 0.0);
        let c = run(&inst(0.0, LOOP_ONCE, 0), 1.25, &[1.0, 1.0]);
        assert_eq!(c.sample_time, 1.25, "rate 0 pauses");
    }

    #[test]
    fn finite_loop_count_stops_on_the_last_frame() {
        let i = inst(1.0, LOOP_REPEAT, 3);
        let c = run(&i, 0.0, &[2.5]);
        assert!((c.sample_time - 0.5).abs() < 1e-6, "second loop: {c:?}");
        let c = run(&i, 0.0, &[5.5]);
        assert!((c.sample_time - 1.5).abs() < 1e-6, "third loop: {c:?}");
        let c = run(&i, 0.0, &[6.5, 3.0]);
        assert_eq!((c.time, c.sample_time), (6.0, 2.0), "holds the end after N loops");
    }
}
