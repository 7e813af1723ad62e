//! Unit tests of the clock stage's mirror.

use super::*;
use glam::DVec2;

#[test]
fn blend_lists_stay_sorted_merge_and_keep_the_heaviest() {
    let mut l = BlendList::default();
    // Two more than fit: the two lightest (0.01 and 0.02) are dropped.
    let weights = [
        0.1f32, 0.5, 0.05, 0.3, 0.2, 0.15, 0.25, 0.35, 0.4, 0.01, 0.02, 0.03, 0.04, 0.06, 0.07, 0.08, 0.09, 0.45,
    ];
    assert_eq!(weights.len(), MAX_BLEND_CLIPS as usize + 2);
    for (k, w) in weights.into_iter().enumerate() {
        add_sample(&mut l, k as u32, 0.0, w, 0);
    }
    assert_eq!(l.count, MAX_BLEND_CLIPS);
    let w: Vec<f32> = l.samples.iter().map(|s| s.weight).collect();
    assert_eq!(
        w,
        [
            0.5, 0.45, 0.4, 0.35, 0.3, 0.25, 0.2, 0.15, 0.1, 0.09, 0.08, 0.07, 0.06, 0.05, 0.04, 0.03
        ]
    );
    add_sample(&mut l, 7, 0.0, 0.5, 0); // clip 7 (0.35) grows to 0.85 and moves to the front
    assert_eq!((l.samples[0].clip, l.samples[0].weight), (7, 0.85));
    add_sample(&mut l, 99, 0.0, 0.0, 0);
    add_sample(&mut l, 98, 0.0, f32::NAN, 0);
    assert!(
        l.samples.iter().all(|s| s.clip < 98),
        "zero and NaN weights are not added"
    );
}

/// Unsigned angle between `a` and `b`, 0 if either is 0: `blend_angle` in f64.
fn angle64(a: DVec2, b: DVec2) -> f64 {
    let (c, d) = (a.perp_dot(b), a.dot(b));
    if c == 0.0 && d == 0.0 { 0.0 } else { c.abs().atan2(d) }
}

/// Gradient-band weights in polar space of samples at `points` for parameter `p`:
/// `blend_weights_freeform_directional`'s formulas in f64.
fn freeform_directional64(points: &[DVec2], p: DVec2) -> Vec<f64> {
    let lp = p.length();
    let h: Vec<f64> = points
        .iter()
        .enumerate()
        .map(|(i, &pi)| {
            let li = pi.length();
            let mut hi = 1.0f64;
            for (_, &pj) in points.iter().enumerate().filter(|&(j, _)| j != i) {
                let lj = pj.length();
                let m = (li + lj) * 0.5;
                let (ri, rj, rp) = (li / m, lj / m, lp / m);
                let (tij, tip) = if li == 0.0 {
                    (angle64(p, pj), 0.0)
                } else if lj == 0.0 {
                    (angle64(p, pi), angle64(p, pi))
                } else {
                    let tij = angle64(pi, pj);
                    let tip = if p == DVec2::ZERO {
                        tij
                    } else if tij == 0.0 {
                        0.0
                    } else if pi.perp_dot(p) * pi.perp_dot(pj) < 0.0 && tij < 0.99 * std::f64::consts::PI {
                        -angle64(pi, p)
                    } else {
                        angle64(pi, p)
                    };
                    (2.0 * tij, 2.0 * tip)
                };
                let (vij, vip) = (DVec2::new(tij, rj - ri), DVec2::new(tip, rp - ri));
                let hij = 1.0 - vij.dot(vip) / vij.dot(vij);
                if hij < 0.0 {
                    return 0.0;
                }
                hi = hi.min(hij);
            }
            hi
        })
        .collect();
    let sum: f64 = h.iter().sum();
    h.iter().map(|x| x / sum).collect()
}

const DAY: u64 = 24 * 3600 * 60;

/// The mannequin's clips with the locomotion tree (tree 0, 2D freeform directional) and a
/// walk-run tree (tree 1, 1D over parameter 0 at the gaits' speeds, 1.4 and 3.5 m/s).
fn synced_trees() -> (AnimationLibrary, Vec<crate::ClipId>) {
    use crate::blend::{BlendNode, BlendTree};
    let skeleton = crate::mannequin::skeleton();
    let clips = crate::mannequin::clips(&skeleton);
    let mut b = crate::offline::LibraryBuilder::new();
    let s = b.add_skeleton(skeleton);
    let ids: Vec<_> = clips.iter().map(|c| b.add_clip(s, c).unwrap()).collect();
    b.add_blend_tree(&crate::mannequin::locomotion_tree(&ids)).unwrap();
    b.add_blend_tree(&BlendTree {
        name: "walk_run".into(),
        nodes: vec![
            BlendNode::Blend1D {
                parameter: 0,
                children: vec![(1.4, 1), (3.5, 2)],
            },
            BlendNode::Clip(ids[1]),
            BlendNode::Clip(ids[2]),
        ],
        root: 0,
    })
    .unwrap();
    (b.build(), ids)
}

/// Tree `tree` at `params` played `frames` frames of 1/60 s from phase 0 through `play_state`:
/// (the phase in cycles as an exact count of ticks, loops). One frame's step when `frames`
/// is 1.
fn play_tree(lib: &AnimationLibrary, tree: usize, params: Vec4, frames: u64) -> (Ticks, u32) {
    let t = lib.blend().trees[tree];
    let source = EventSource {
        character: 0,
        state: 0,
        started: false,
        weight: 1.0,
        root: false,
        frame: 0,
    };
    let (mut time, mut loops) = (Ticks::default(), 0u32);
    for _ in 0..frames {
        let ct = play_state(
            lib,
            &mut BlendList::default(),
            0,
            t.node_offset,
            t.node_count,
            params,
            1.0,
            crate::layout::LOOP_FOREVER,
            0,
            time,
            loops,
            1.0 / 60.0,
            1.0,
            0.0,
            0,
            &source,
            None,
            &mut RootBlend::default(),
        );
        (time, loops) = (ct.time, ct.loops);
    }
    (time, loops)
}

/// A day's phase error in seconds of the synchronized clips, from one frame's step of `tree`
/// at `params` (the clock adds the same ticks every frame), against an f64 clock whose
/// `D = sum w_i T_i / sum w_i` has f64 weights `w64` (by clip) and the clips' durations.
fn day_error(lib: &AnimationLibrary, tree: usize, params: Vec4, w64: &[(crate::ClipId, f64)]) -> f64 {
    let step = i128::from(play_tree(lib, tree, params, 1).0.get());
    let total: f64 = w64.iter().map(|w| w.1).sum();
    let d = w64
        .iter()
        .map(|&(c, w)| w * f64::from(lib.clips()[c.index() as usize].duration))
        .sum::<f64>()
        / total;
    let want = f64::from(1.0f32 / 60.0) * DAY as f64 / d;
    // The day's ticks, exactly, less the reference's whole cycles.
    let got = step * i128::from(DAY) - ((want.floor() as i128) << TICK_BITS);
    (got as f64 / (1u64 << TICK_BITS) as f64 - want.fract()) * d
}

/// f64 weights of the walk-run tree at `speed`.
fn walk_run64(ids: &[crate::ClipId], speed: f32) -> Vec<(crate::ClipId, f64)> {
    let x = f64::from(speed).clamp(1.4f32.into(), 3.5f32.into());
    let w = (f64::from(3.5f32) - x) / (f64::from(3.5f32) - f64::from(1.4f32));
    vec![(ids[1], w), (ids[2], 1.0 - w)]
}

/// f64 weights of the locomotion tree at velocity `v`.
fn locomotion64(ids: &[crate::ClipId], v: glam::Vec2) -> Vec<(crate::ClipId, f64)> {
    let gaits = crate::mannequin::gaits();
    let points: Vec<DVec2> = gaits.iter().map(|g| g.velocity.as_dvec2()).collect();
    let w = freeform_directional64(&points, v.as_dvec2());
    let clip = |name: &str| ids[crate::mannequin::CLIP_NAMES.iter().position(|n| *n == name).unwrap()];
    gaits.iter().zip(w).map(|(g, w)| (clip(g.clip), w)).collect()
}

/// Blend-synced trees over a simulated day at 60 frames a second, against an f64 clock whose
/// duration `D` comes from f64 weights of the same parameters: 43 speeds of a 1D tree, 221
/// velocities of a 2D one. The tick clock adds exactly the same step every frame, but `D` is
/// an f32 sum from f32 weights (a few parts in 10⁷ off, the rounding of the quotient alone up
/// to 2⁻²⁴ of it): the phase stays within 0.03 s a day (3.5e-7 of the time played), not the
/// 1e-4 s of a clip's clock.
#[test]
fn synced_trees_stay_within_three_hundredths_of_a_second_a_day() {
    const BOUND: f64 = 0.03;
    let (lib, ids) = synced_trees();
    // A whole day, frame by frame: the ticks are the first frame's times the frames.
    for (tree, params) in [(1, Vec4::new(2.3, 0.0, 0.0, 0.0)), (0, Vec4::new(0.7, 2.1, 0.0, 0.0))] {
        let (time, loops) = play_tree(&lib, tree, params, DAY);
        let all = i128::from(play_tree(&lib, tree, params, 1).0.get()) * i128::from(DAY);
        assert_eq!(
            (time.get(), loops),
            ((all % (1 << TICK_BITS)) as i64, (all >> TICK_BITS) as u32),
            "tree {tree}"
        );
    }
    let mut worst = [0.0f64; 2];
    for k in 0..=42 {
        let speed = 1.4 + 0.05 * k as f32;
        let e = day_error(&lib, 1, Vec4::new(speed, 0.0, 0.0, 0.0), &walk_run64(&ids, speed));
        worst[0] = worst[0].max(e.abs());
    }
    for (x, y) in (0..13).flat_map(|i| (0..17).map(move |j| (-1.5 + 0.25 * i as f32, -1.2 + 0.3 * j as f32))) {
        let v = glam::Vec2::new(x, y);
        let e = day_error(&lib, 0, Vec4::new(x, y, 0.0, 0.0), &locomotion64(&ids, v));
        worst[1] = worst[1].max(e.abs());
    }
    // Measured: 4.6 ms (1D) and 16.4 ms (2D).
    assert!(
        worst[0] < BOUND && worst[1] < BOUND,
        "worst error over a day (1D, 2D): {worst:?} s"
    );
}

/// A state started outside the loops it plays takes its first step from where its start is
/// wrapped or clamped to: a reverse clip started past its end (or past its last loop) from
/// its end, a forward one started before 0 from 0; a tree's phase alike.
#[test]
fn a_state_started_outside_its_loops_steps_from_its_clamped_start() {
    use crate::cpu::looping::start_clip_time;
    use crate::layout::{LOOP_ONCE, LOOP_REPEAT};
    let (lib, ids) = synced_trees();
    let dt = 1.0f32 / 60.0;
    // (tree, rate, loop mode, loop count, start, the end or start of its loops, loops after)
    let d = lib.clips()[ids[1].index() as usize].duration;
    let cases = [
        (None, -1.0f32, LOOP_ONCE, 1, d + 1.0, d, 0),
        (None, -1.0, LOOP_REPEAT, 3, 3.0 * d + 1.0, 3.0 * d, 2),
        (None, -0.5, LOOP_REPEAT, 3, 10.5 * d, 3.0 * d, 2),
        (None, 1.0, LOOP_ONCE, 1, -1.0, 0.0, 0),
        (None, 1.0, LOOP_REPEAT, 3, -2.5 * d, 0.0, 0),
        (Some(1), -1.0, LOOP_ONCE, 1, 1.5, 1.0, 0),
        (Some(0), -1.0, LOOP_REPEAT, 2, 7.25, 2.0, 1),
        (Some(1), 1.0, LOOP_REPEAT, 2, -0.5, 0.0, 0),
    ];
    for (tree, rate, mode, count, start, clamped, loops) in cases {
        let play = |start: f32| {
            let mut inst = crate::cpu::clip_instance(&lib, ids[1], 0).unwrap();
            (inst.rate, inst.loop_mode, inst.loop_count, inst.start_time) = (rate, mode, count, start);
            let mut duration = d;
            if let Some(t) = tree {
                let t = lib.blend().trees[t];
                (inst.tree_offset, inst.tree_nodes, inst.params) = (t.node_offset, t.node_count, Vec4::splat(2.0));
                duration = 1.0;
            }
            // The clock the controller writes: a state behind, so the first frame starts it.
            let ct = start_clip_time(start, mode, count, duration);
            let clock = GpuClock {
                time: ct.time,
                loops: ct.loops,
                seq: inst.seq.wrapping_sub(1),
                ..Default::default()
            };
            advance_instance(
                &lib,
                &[],
                &inst,
                &instance_playback(&inst),
                &clock,
                dt,
                &mut BlendList::default(),
                None,
                None,
            )
        };
        let (got, want) = (play(start), play(clamped));
        let case = format!("tree {tree:?}, rate {rate}, mode {mode} x {count}, from {start}");
        assert_eq!((got.time, got.loops), (want.time, want.loops), "{case}");
        assert_eq!(got.loops, loops, "{case}");
        if tree.is_none() {
            // One step of |rate| dt from the end (backwards) or from 0 (forwards).
            let step = ratio_ticks(rate.abs(), dt, 1.0);
            let from = if rate < 0.0 { period_ticks(d) - step } else { step };
            assert_eq!(got.time.get(), from, "{case}");
        }
    }
}

#[test]
fn transition_curves() {
    assert_eq!(transition_weight(0.5, 1.0, false), 0.5);
    assert_eq!(transition_weight(0.5, 1.0, true), 0.5);
    assert!((transition_weight(0.25, 1.0, true) - 0.15625).abs() < 1e-7);
    assert_eq!(transition_weight(3.0, 1.0, true), 1.0);
    assert_eq!(
        transition_weight(0.0, 0.0, false),
        1.0,
        "a zero-length transition is a cut"
    );
}

#[test]
fn a_frame_reads_and_writes_only_the_clock_units_it_may_change() {
    let mut inst: GpuInstance = bytemuck::Zeroable::zeroed();
    inst.seq = 1;
    // A clip playing on: the target's unit alone; a new state: the source's and the
    // transition's too (the running clock moves to the source).
    assert_eq!(clock_units(inst.flags, false), 0);
    assert_eq!(clock_units(inst.flags, true), CLOCK_UNIT_SOURCE | CLOCK_UNIT_TRANSITION);
    inst.flags = source_kind::CLIP;
    assert_eq!(
        clock_units(inst.flags, false),
        CLOCK_UNIT_SOURCE | CLOCK_UNIT_TRANSITION
    );
    // Layers: their seq (the source's unit) and their times.
    inst.flags = LAYER_ON;
    assert_eq!(
        clock_units(inst.flags, false),
        CLOCK_UNIT_SOURCE | CLOCK_UNIT_TRANSITION
    );
    inst.flags = LAYER_ON << 2;
    assert_eq!(clock_units(inst.flags, false), CLOCK_UNIT_SOURCE | CLOCK_UNIT_LAYERS);

    // A unit outside `units` is neither read (zero in what the frame starts from) nor written
    // (its old bytes stay), whatever the frame computed for it.
    let old = GpuClock {
        time: Ticks::from_f32(1.0),
        seq: 1,
        source_time: Ticks::from_f32(2.0),
        transition_time: Ticks::from_f32(3.0),
        layer_time: [Ticks::from_f32(4.0); MAX_LAYERS as usize],
        ..Default::default()
    };
    let loaded = load_clock_units(&old, CLOCK_UNIT_LAYERS);
    assert_eq!((loaded.time, loaded.seq), (old.time, old.seq));
    assert_eq!(
        (loaded.source_time, loaded.transition_time),
        (Ticks::default(), Ticks::default())
    );
    assert_eq!(loaded.layer_time[0], Ticks::default());
    assert_eq!(&loaded.layer_time[1..], &old.layer_time[1..]);
    let new = GpuClock {
        time: Ticks::from_f32(5.0),
        ..Default::default()
    };
    let stored = store_clock(&old, &new, CLOCK_UNIT_LAYERS);
    assert_eq!(stored.time, new.time);
    assert_eq!(
        (stored.source_time, stored.transition_time),
        (old.source_time, old.transition_time)
    );
    assert_eq!(stored.layer_time[0], old.layer_time[0]);
    assert_eq!(stored.layer_time[1], Ticks::default());
}
