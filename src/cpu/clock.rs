//! Mirror of `shaders/clock.wgsl`.
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use crate::cpu::node_child_weights;
use crate::layout::{
    BlendList, BlendSample, GpuClock, GpuFrame, GpuInstance, GpuLayerDef, LAYER_ON, LOOP_ONCE, LOOP_REPEAT, LayerApply,
    MAX_BLEND_CHILDREN, MAX_BLEND_CLIPS, MAX_LAYERS, MAX_TREE_NODES, SNAPSHOT_CLIP, TRANSITION_FROZEN,
    TRANSITION_SMOOTH, layer_mode, node_kind, source_kind,
};
use crate::library::AnimationLibrary;
use glam::Vec4;

/// A clock reading: local time, the time sampled, the normalized time. WGSL `ClipTime`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClipTime {
    /// Local time (wrapped or clamped by the loop mode).
    pub time: f32,
    /// Time within the clip.
    pub sample_time: f32,
    /// `sample_time / duration`.
    pub phase: f32,
}

/// Advances a local time by `rate * dt` on a clip of `duration` and applies the loop mode.
/// WGSL `advance_clip_time`.
#[must_use]
pub fn advance_clip_time(time: f32, rate: f32, loop_mode: u32, loop_count: u32, duration: f32, dt: f32) -> ClipTime {
    let mut t = time + rate * dt;
    let mut s;
    if loop_mode == LOOP_ONCE {
        t = t.clamp(0.0, duration);
        s = t;
    } else if loop_mode == LOOP_REPEAT {
        let end = duration * loop_count as f32;
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
    ClipTime {
        time: t,
        sample_time: s,
        phase: s / duration,
    }
}

/// Inserts a sample, heaviest first, dropping the lightest beyond [`MAX_BLEND_CLIPS`]; equal
/// (clip, time) samples merge. WGSL `add_sample`.
pub fn add_sample(list: &mut BlendList, clip: u32, time: f32, weight: f32, layer: u32) {
    if !(weight > 0.0) {
        return;
    }
    for k in 0..list.count as usize {
        if list.samples[k].clip == clip && list.samples[k].time == time && list.samples[k].layer == layer {
            list.samples[k].weight += weight;
            let mut m = k;
            while m > 0 && list.samples[m - 1].weight < list.samples[m].weight {
                list.samples.swap(m - 1, m);
                m -= 1;
            }
            return;
        }
    }
    let mut n = list.count as usize;
    if n == MAX_BLEND_CLIPS as usize {
        if list.samples[n - 1].weight >= weight {
            return;
        }
        n -= 1;
    }
    let mut m = n;
    while m > 0 && list.samples[m - 1].weight < weight {
        list.samples[m] = list.samples[m - 1];
        m -= 1;
    }
    list.samples[m] = BlendSample {
        clip,
        time,
        weight,
        layer,
    };
    list.count = n as u32 + 1;
}

/// Leaves of a blend tree with their weights. WGSL `Leaves`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Leaves {
    /// Entries in use.
    pub count: u32,
    /// Clip of each leaf.
    pub clips: [u32; MAX_BLEND_CLIPS as usize],
    /// Weight of each leaf.
    pub weights: [f32; MAX_BLEND_CLIPS as usize],
}

/// The clips at the leaves of the tree whose nodes start at `offset`, with their weights for
/// `params`. WGSL `tree_leaves`.
#[must_use]
pub fn tree_leaves(lib: &AnimationLibrary, offset: u32, count: u32, params: Vec4) -> Leaves {
    let mut node_weight = [0.0f32; MAX_TREE_NODES as usize];
    node_weight[0] = 1.0;
    let mut leaves = Leaves::default();
    for k in 0..count.min(MAX_TREE_NODES) {
        let w = node_weight[k as usize];
        if !(w > 0.0) {
            continue;
        }
        let node = &lib.blend().nodes[(offset + k) as usize];
        if node.kind == node_kind::CLIP {
            let mut slot = leaves.count;
            for m in 0..leaves.count {
                if leaves.clips[m as usize] == node.clip {
                    slot = m;
                }
            }
            if slot < leaves.count {
                leaves.weights[slot as usize] += w;
            } else if leaves.count < MAX_BLEND_CLIPS {
                leaves.clips[slot as usize] = node.clip;
                leaves.weights[slot as usize] = w;
                leaves.count += 1;
            } else {
                let mut lightest = 0;
                for m in 1..MAX_BLEND_CLIPS as usize {
                    if leaves.weights[m] < leaves.weights[lightest] {
                        lightest = m;
                    }
                }
                if leaves.weights[lightest] < w {
                    leaves.clips[lightest] = node.clip;
                    leaves.weights[lightest] = w;
                }
            }
            continue;
        }
        let cw = node_child_weights(lib.blend(), node, params);
        for c in 0..node.child_count.min(MAX_BLEND_CHILDREN) {
            let child = lib.blend().children[(node.child_offset + c) as usize].node;
            if child > k && child < count {
                node_weight[child as usize] += w * cw[c as usize];
            }
        }
    }
    leaves
}

/// Advances one state (a clip, or a phase-synchronized blend tree) and adds its samples scaled by
/// `scale`. WGSL `play_state`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
#[must_use]
pub fn play_state(
    lib: &AnimationLibrary,
    list: &mut BlendList,
    clip: u32,
    tree_offset: u32,
    tree_nodes: u32,
    params: Vec4,
    rate: f32,
    loop_mode: u32,
    loop_count: u32,
    time: f32,
    dt: f32,
    scale: f32,
    layer: u32,
) -> ClipTime {
    if tree_nodes == 0 {
        let ct = advance_clip_time(
            time,
            rate,
            loop_mode,
            loop_count,
            lib.clips()[clip as usize].duration,
            dt,
        );
        add_sample(list, clip, ct.sample_time, scale, layer);
        return ct;
    }
    let leaves = tree_leaves(lib, tree_offset, tree_nodes, params);
    let mut total = 0.0;
    let mut synced = 0.0;
    for m in 0..leaves.count as usize {
        total += leaves.weights[m];
        synced += leaves.weights[m] * lib.clips()[leaves.clips[m] as usize].duration;
    }
    if !(total > 0.0) {
        return ClipTime {
            time,
            sample_time: 0.0,
            phase: 0.0,
        };
    }
    let duration = synced / total;
    let ct = advance_clip_time(time, rate / duration, loop_mode, loop_count, 1.0, dt);
    for m in 0..leaves.count as usize {
        add_sample(
            list,
            leaves.clips[m],
            ct.phase * lib.clips()[leaves.clips[m] as usize].duration,
            scale * leaves.weights[m],
            layer,
        );
    }
    ct
}

/// Transition weight of the target after `elapsed` of `duration` seconds: linear, or the smooth
/// cubic `u²(3 − 2u)`. WGSL `transition_weight`.
#[must_use]
pub fn transition_weight(elapsed: f32, duration: f32, smooth_curve: bool) -> f32 {
    if !(duration > 0.0) {
        return 1.0;
    }
    let u = (elapsed / duration).clamp(0.0, 1.0);
    if smooth_curve {
        return u * u * (3.0 - 2.0 * u);
    }
    u
}

/// One instance's frame: its new clock, and its blend list written to `list`. `layer_defs` are
/// the definitions its layers' `def` index. WGSL `advance_instance`.
pub fn advance_instance(
    lib: &AnimationLibrary,
    layer_defs: &[GpuLayerDef],
    inst: &GpuInstance,
    clock_in: &GpuClock,
    dt: f32,
    list: &mut BlendList,
) -> GpuClock {
    let mut c = *clock_in;
    let kind = inst.source_kind();
    if inst.seq != c.seq {
        c.source_time = c.time;
        c.transition_time = 0.0;
        c.time = inst.start_time;
        c.seq = inst.seq;
    }
    // Layers (re)started since the last frame have a seq newer than the one the clock saw.
    let seen_layer_seq = c.layer_seq;
    if inst.flags & (LAYER_ON * ((1 << MAX_LAYERS) - 1)) != 0 {
        c.layer_seq = inst.layer_seq;
    }
    let mut beta = 1.0;
    if kind != source_kind::NONE {
        c.transition_time += dt;
        beta = transition_weight(
            c.transition_time,
            inst.transition_duration,
            (inst.flags & TRANSITION_SMOOTH) != 0,
        );
    }
    // s = 0: the target, 1: the source, 2 and on: the layers — one call of play_state for all.
    for s in 0..2 + MAX_LAYERS {
        let mut clip = inst.clip;
        let mut tree_offset = inst.tree_offset;
        let mut tree_nodes = inst.tree_nodes;
        let mut rate = inst.rate;
        let mut loop_mode = inst.loop_mode;
        let mut loop_count = inst.loop_count;
        let mut time = c.time;
        let mut state_dt = dt;
        let mut scale = beta;
        let mut layer_id = 0;
        if s == 1 {
            if kind == source_kind::SNAPSHOT {
                add_sample(list, SNAPSHOT_CLIP, 0.0, 1.0 - beta, 0);
                continue;
            }
            if kind == source_kind::NONE || !(beta < 1.0) {
                continue;
            }
            clip = inst.source_clip;
            tree_offset = inst.source_tree_offset;
            tree_nodes = 0;
            if kind == source_kind::TREE {
                tree_nodes = inst.source_tree_nodes;
            }
            rate = inst.source_rate;
            loop_mode = inst.source_loop_mode;
            loop_count = inst.source_loop_count;
            time = c.source_time;
            if (inst.flags & TRANSITION_FROZEN) != 0 {
                state_dt = 0.0;
            }
            scale = 1.0 - beta;
        } else if s >= 2 {
            let k = (s - 2) as usize;
            if inst.flags & (LAYER_ON << k) == 0 {
                continue;
            }
            let layer = &inst.layers[k];
            let def = &layer_defs[layer.def as usize];
            if (layer.seq.wrapping_sub(seen_layer_seq) as i32) > 0 {
                c.layer_time[k] = layer.start_time;
            }
            let mut weight = layer.weight;
            if kind == source_kind::SNAPSHOT {
                weight *= beta;
            }
            list.layers[k] = LayerApply {
                mode: def.mode,
                weight,
                mask: def.mask,
                _pad: 0,
            };
            if def.mode == layer_mode::ADDITIVE_MESH {
                list.mesh_additive = 1;
            }
            if def.tree_nodes == 0 && def.time_parameter < 4 {
                let t = inst.params[def.time_parameter as usize].clamp(0.0, lib.clips()[def.clip as usize].duration);
                c.layer_time[k] = t;
                add_sample(list, def.clip, t, 1.0, k as u32 + 1);
                continue;
            }
            clip = def.clip;
            tree_offset = def.tree_offset;
            tree_nodes = def.tree_nodes;
            rate = layer.rate;
            loop_mode = def.loop_mode;
            loop_count = 1;
            time = c.layer_time[k];
            scale = 1.0;
            layer_id = k as u32 + 1;
        }
        let ct = play_state(
            lib,
            list,
            clip,
            tree_offset,
            tree_nodes,
            inst.params,
            rate,
            loop_mode,
            loop_count,
            time,
            state_dt,
            scale,
            layer_id,
        );
        if s == 0 {
            c.time = ct.time;
        } else if s == 1 {
            c.source_time = ct.time;
        } else {
            c.layer_time[(s - 2) as usize] = ct.time;
        }
    }
    c
}

/// Stage `clock`: one invocation per instance.
pub fn clock(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    layer_defs: &[GpuLayerDef],
    instances: &[GpuInstance],
    clocks: &mut [GpuClock],
    lists: &mut [BlendList],
) {
    for i in 0..frame.instance_count as usize {
        let mut list = BlendList::default();
        clocks[i] = advance_instance(lib, layer_defs, &instances[i], &clocks[i], frame.dt, &mut list);
        lists[i] = list;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layout::LOOP_FOREVER;

    fn run(rate: f32, loop_mode: u32, loop_count: u32, start: f32, steps: &[f32]) -> ClipTime {
        let mut c = ClipTime {
            time: start,
            ..Default::default()
        };
        for &dt in steps {
            c = advance_clip_time(c.time, rate, loop_mode, loop_count, 2.0, dt);
        }
        c
    }

    #[test]
    fn loop_forever_wraps_both_ways() {
        let c = run(1.0, LOOP_FOREVER, 0, 0.0, &[1.5, 1.0]);
        assert!(
            (c.sample_time - 0.5).abs() < 1e-6 && (c.phase - 0.25).abs() < 1e-6,
            "{c:?}"
        );
        let c = run(-1.0, LOOP_FOREVER, 0, 0.5, &[1.0]);
        assert!(
            (c.sample_time - 1.5).abs() < 1e-6,
            "reverse play wraps to the end: {c:?}"
        );
        let c = run(3.0, LOOP_FOREVER, 0, 0.0, &[100.0 / 3.0]);
        assert!(
            c.time < 2.0 && (c.sample_time - 0.0).abs() < 1e-4,
            "time stays wrapped: {c:?}"
        );
    }

    #[test]
    fn play_once_clamps_and_reverse_play_stops_at_zero() {
        let c = run(1.0, LOOP_ONCE, 0, 0.0, &[1.5, 1.5]);
        assert_eq!((c.time, c.sample_time, c.phase), (2.0, 2.0, 1.0));
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
        assert!((c.sample_time - 0.5).abs() < 1e-6, "second loop: {c:?}");
        let c = run(1.0, LOOP_REPEAT, 3, 0.0, &[5.5]);
        assert!((c.sample_time - 1.5).abs() < 1e-6, "third loop: {c:?}");
        let c = run(1.0, LOOP_REPEAT, 3, 0.0, &[6.5, 3.0]);
        assert_eq!((c.time, c.sample_time), (6.0, 2.0), "holds the end after N loops");
    }

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
}
