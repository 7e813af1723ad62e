//! The built-in locomotion blend space: phase synchronization keeps the feet in step across blend
//! weights, and the blend follows the velocity in any direction.

mod common;

use glam::Vec4;
use wgpu_anim::layout::BlendList;
use wgpu_anim::{cpu, mannequin};

/// The left foot's height over one normalized cycle of the locomotion blend at
/// velocity `v` (character space, m/s), from the CPU mirror: every leaf sampled at phase × its own
/// duration, as the `clock` stage does.
fn left_foot_height(v: glam::Vec2, steps: usize) -> Vec<f32> {
    let (lib, skel, _) = mannequin::library();
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).unwrap();
    let t = lib.blend().trees[tree.index() as usize];
    let params = Vec4::new(v.x, v.y, 0.0, 0.0);
    let leaves = cpu::tree_leaves(&lib, t.node_offset, t.node_count, params).unwrap();
    let s = &lib.skeletons()[skel.index() as usize];
    let (l, r) = (s.joint_index("foot_l").unwrap(), s.joint_index("foot_r").unwrap());
    let inst = cpu::clip_instance(&lib, lib.clip_at(0).unwrap(), 0).unwrap();
    (0..steps)
        .map(|k| {
            let phase = k as f32 / steps as f32;
            let mut list = BlendList::default();
            for m in 0..leaves.count as usize {
                let clip = leaves.clips[m];
                cpu::add_sample(
                    &mut list,
                    clip,
                    phase * lib.clips()[clip as usize].duration,
                    leaves.weights[m],
                    0,
                );
            }
            let pose = cpu::evaluate(&lib, &[inst], &[list]).unwrap();
            let _ = r;
            pose.model[l].y.w
        })
        .collect()
}

/// The left foot's down moment: the circular mean of the phases where the foot is within 5 mm of
/// its lowest point (the middle of its stance).
fn foot_down_phase(height: &[f32]) -> f32 {
    let low = height.iter().copied().fold(f32::MAX, f32::min);
    let (mut x, mut y) = (0.0f32, 0.0f32);
    for (k, h) in height.iter().enumerate() {
        if *h < low + 0.005 {
            let a = std::f32::consts::TAU * k as f32 / height.len() as f32;
            x += a.cos();
            y += a.sin();
        }
    }
    (y.atan2(x) / std::f32::consts::TAU).rem_euclid(1.0)
}

fn phase_distance(a: f32, b: f32) -> f32 {
    let d = (a - b).rem_euclid(1.0);
    d.min(1.0 - d)
}

#[test]
fn the_left_foot_is_down_at_the_same_phase_for_every_walk_run_weight() {
    // Each clip plants its left foot at phase 0 by convention; measured at the ankle, the walk's
    // and the run's stance centres sit a few hundredths before 0 (heel roll). With phase sync a
    // walk-run blend keeps its foot-down moment between the two clips' own, for every weight;
    // without it the clips (1.0 s and 0.73 s) would drift apart by a quarter cycle per cycle.
    let steps = 400;
    let walk = foot_down_phase(&left_foot_height(glam::Vec2::new(0.0, 1.4), steps));
    let run = foot_down_phase(&left_foot_height(glam::Vec2::new(0.0, 3.5), steps));
    eprintln!("left foot down: walk {walk:.3}, run {run:.3}");
    for (name, p) in [("walk", walk), ("run", run)] {
        assert!(
            phase_distance(p, 0.0) < 0.1,
            "the {name} plants its left foot near phase 0, not {p}"
        );
    }
    let (lo, hi) = if phase_distance(walk, run) == (run - walk).rem_euclid(1.0) {
        (walk, run)
    } else {
        (run, walk)
    };
    let span = (hi - lo).rem_euclid(1.0);
    for v in [1.8f32, 2.2, 2.6, 3.0] {
        let down = foot_down_phase(&left_foot_height(glam::Vec2::new(0.0, v), steps));
        let into = (down - lo).rem_euclid(1.0);
        eprintln!("  {v} m/s: {down:.3}");
        assert!(
            into <= span + 0.015 || phase_distance(down, lo) <= 0.015,
            "at {v} m/s the left foot is down at phase {down}, outside the clips' own [{lo}, {hi}]"
        );
    }
    // The strafes and the backward walk keep the convention too (blended with their neighbours).
    for v in [
        glam::Vec2::new(1.0, 0.6),
        glam::Vec2::new(-1.0, 0.6),
        glam::Vec2::new(0.3, -0.9),
    ] {
        let down = foot_down_phase(&left_foot_height(v, steps));
        assert!(
            phase_distance(down, 0.0) < 0.15,
            "at {v} the left foot is down at phase {down}"
        );
    }
}

#[test]
fn the_blend_follows_the_velocity() {
    let (lib, _, clips) = mannequin::library();
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).unwrap();
    let t = lib.blend().trees[tree.index() as usize];
    let weight_of = |v: [f32; 2], clip: usize| {
        let leaves = cpu::tree_leaves(&lib, t.node_offset, t.node_count, Vec4::new(v[0], v[1], 0.0, 0.0)).unwrap();
        let total: f32 = leaves.weights[..leaves.count as usize].iter().sum();
        (0..leaves.count as usize)
            .filter(|&m| leaves.clips[m] == clips[clip].index())
            .map(|m| leaves.weights[m] / total)
            .sum::<f32>()
    };
    assert!((weight_of([0.0, 0.0], 0) - 1.0).abs() < 1e-5, "standing still is idle");
    assert!(
        (weight_of([0.0, 1.4], 1) - 1.0).abs() < 1e-5,
        "1.4 m/s forward is the walk"
    );
    assert!(
        (weight_of([0.0, 3.5], 2) - 1.0).abs() < 1e-5,
        "3.5 m/s forward is the run"
    );
    assert!(
        (weight_of([1.2, 0.0], 4) - 1.0).abs() < 1e-5,
        "1.2 m/s to the left is the left strafe"
    );
    let half = weight_of([0.0, 2.45], 1);
    assert!(
        half > 0.3 && half < 0.7 && weight_of([0.0, 2.45], 2) > 0.3,
        "between walk and run both count"
    );
    let diagonal = [weight_of([0.9, 0.9], 1), weight_of([0.9, 0.9], 4)];
    assert!(
        diagonal[0] > 0.2 && diagonal[1] > 0.2,
        "forward-left blends walk and left strafe: {diagonal:?}"
    );
}
