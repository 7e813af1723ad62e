//! Mirror of `shaders/clock.wgsl`. Its tick arithmetic, looping, clip events, root motion and
//! float curves are the modules `ticks`, `looping`, `events`, `root_motion` and `curves`, as in the
//! shader. The stage's entry point [`clock`] checks what the page holds, then runs [`kernel`].
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use super::PageBuffers;
use super::checks::{instance_count, targets};
use super::curves::blend_curves;
use super::events::{EventLog, EventSource, fire_events};
use super::looping::{ClipTime, advance_clip_time, frame_start_time};
use super::machine::{MachineEvent, Playback, Slots, machine_playback, machine_step};
use super::root_motion::{RootBlend, add_root, move_root};
use super::ticks::{period_ticks, ratio_ticks, ticks_from_f32};
use crate::cpu::blend_weights::tree_leaves;
use crate::error::Result;
use crate::layout::{
    BlendList, BlendSample, CLOCK_UNIT_LAYERS, CLOCK_UNIT_SOURCE, CLOCK_UNIT_TRANSITION, FRAME_CURVES, FRAME_EVENTS,
    GpuClock, GpuFrame, GpuInstance, GpuLayerDef, GpuMachineState, GpuOutput, KEEP_POSE, KEEP_VELOCITY, LAYER_ON,
    LayerApply, MACHINE, MAX_BLEND_CLIPS, MAX_LAYERS, ROOT_MOTION, SNAPSHOT_CLIP, TICK_BITS, TICK_LIMIT,
    TRANSITION_DEAD_BLEND, TRANSITION_FROZEN, TRANSITION_SMOOTH, Ticks, VELOCITY_FROM_LAST_POSE, inertia, layer_mode,
    source_kind,
};
use crate::library::AnimationLibrary;
use crate::math::Affine;
use glam::Vec4;

/// Inserts a sample, heaviest first, dropping the lightest beyond [`MAX_BLEND_CLIPS`]; equal
/// (clip, time) samples merge. WGSL `add_sample`.
pub fn add_sample(list: &mut BlendList, clip: u32, time: f32, weight: f32, layer: u32) {
    if !(weight > 0.0) {
        return;
    }
    // A list's count is at most MAX_BLEND_CLIPS; one built by hand with more counts as that many.
    let count = list.count.min(MAX_BLEND_CLIPS) as usize;
    for k in 0..count {
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
    let mut n = count;
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

/// Advances one state (a clip, or a phase-synchronized blend tree) from local time `time` in loop
/// `loops` (a state that started this frame: from there wrapped or clamped by its loop mode,
/// [`frame_start_time`]) and adds its samples scaled by `scale`; with `previous` above 0, also
/// its samples where it stood before the step, scaled by `previous`, in layer `layer` +
/// [`inertia::PREVIOUS_TAG`]. WGSL `play_state`.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
#[must_use]
pub(crate) fn play_state(
    lib: &AnimationLibrary,
    list: &mut BlendList,
    clip: u32,
    tree_offset: u32,
    tree_nodes: u32,
    params: Vec4,
    rate: f32,
    loop_mode: u32,
    loop_count: u32,
    time: Ticks,
    loops: u32,
    dt: f32,
    scale: f32,
    previous: f32,
    layer: u32,
    source: &EventSource,
    mut log: Option<&mut EventLog>,
    root: &mut RootBlend,
) -> ClipTime {
    if tree_nodes == 0 {
        let duration = lib.clips()[clip as usize].duration;
        let delta = ratio_ticks(rate, dt, 1.0);
        let period = period_ticks(duration);
        let start = frame_start_time(time, loops, source.started, loop_mode, loop_count, duration, period);
        let ct = advance_clip_time(start.time, start.loops, delta, loop_mode, loop_count, duration, period);
        add_sample(list, clip, ct.sample_time, scale, layer);
        if previous > 0.0 {
            let before = advance_clip_time(start.time, start.loops, 0, loop_mode, loop_count, duration, period);
            add_sample(list, clip, before.sample_time, previous, layer + inertia::PREVIOUS_TAG);
        }
        if source.root {
            let t0 = start.time.to_f32().clamp(0.0, duration);
            add_root(lib, root, clip, t0, start.loops, ct.sample_time, ct.loops, scale);
        }
        if let Some(log) = log {
            fire_events(
                lib,
                log,
                source,
                clip,
                scale * source.weight,
                start.time,
                start.loops,
                &ct,
                delta,
                period,
                loop_mode,
                loop_count,
                false,
            );
        }
        return ct;
    }
    let cycle = 1 << TICK_BITS;
    let start = frame_start_time(time, loops, source.started, loop_mode, loop_count, 1.0, cycle);
    let leaves = tree_leaves(lib, tree_offset, tree_nodes, params);
    let mut total = 0.0;
    let mut synced = 0.0;
    for m in 0..leaves.count as usize {
        total += leaves.weights[m];
        synced += leaves.weights[m] * lib.clips()[leaves.clips[m] as usize].duration;
    }
    if !(total > 0.0) {
        return ClipTime {
            time: start.time,
            loops: start.loops,
            sample_time: 0.0,
            phase: 0.0,
        };
    }
    // D = sum w_i T_i (weights normalized): every child advances its phase by rate · dt / D.
    let duration = synced / total;
    let delta = ratio_ticks(rate, dt, duration);
    let ct = advance_clip_time(start.time, start.loops, delta, loop_mode, loop_count, 1.0, cycle);
    let phase0 = start.time.to_f32().clamp(0.0, 1.0);
    let before = advance_clip_time(start.time, start.loops, 0, loop_mode, loop_count, 1.0, cycle);
    for m in 0..leaves.count as usize {
        let leaf_duration = lib.clips()[leaves.clips[m] as usize].duration;
        add_sample(
            list,
            leaves.clips[m],
            ct.phase * leaf_duration,
            scale * leaves.weights[m],
            layer,
        );
        if previous > 0.0 {
            add_sample(
                list,
                leaves.clips[m],
                before.phase * leaf_duration,
                previous * leaves.weights[m],
                layer + inertia::PREVIOUS_TAG,
            );
        }
        if source.root {
            add_root(
                lib,
                root,
                leaves.clips[m],
                phase0 * leaf_duration,
                start.loops,
                ct.phase * leaf_duration,
                ct.loops,
                scale * leaves.weights[m],
            );
        }
        if let Some(log) = log.as_deref_mut() {
            fire_events(
                lib,
                log,
                source,
                leaves.clips[m],
                scale * leaves.weights[m] * source.weight,
                start.time,
                start.loops,
                &ct,
                delta,
                cycle,
                loop_mode,
                loop_count,
                true,
            );
        }
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
/// the definitions its layers' `def` index. WGSL `advance_instance`. With `events` (the frame,
/// the instance's index in it, the log), fires the events its states crossed when the frame's
/// flags say so; with `root_out` (the instance's root and its world to write), moves a character
/// with root motion.
#[expect(clippy::too_many_arguments, reason = "keeps the signature of the shader function")]
pub(crate) fn advance_instance(
    lib: &AnimationLibrary,
    layer_defs: &[GpuLayerDef],
    inst: &GpuInstance,
    p: &Playback,
    clock_in: &GpuClock,
    dt: f32,
    list: &mut BlendList,
    mut events: Option<(&GpuFrame, u32, &mut EventLog)>,
    root_out: Option<(&mut GpuOutput, &mut Affine)>,
) -> GpuClock {
    let flags = p.flags;
    let kind = flags & 15;
    let target_started = p.seq != clock_in.seq;
    let units = clock_units(flags, target_started);
    let mut c = load_clock_units(clock_in, units);
    let root_motion = flags & ROOT_MOTION != 0;
    let mut root = RootBlend::default();
    if target_started {
        c.source_time = c.time;
        c.source_loops = c.loops;
        c.transition_time = Ticks::default();
        c.time = Ticks::from_f32(p.start_time);
        c.loops = 0;
        c.seq = p.seq;
    }
    // Layers (re)started since the last frame have a seq newer than the one the clock saw.
    let seen_layer_seq = c.layer_seq;
    if flags & LAYERS_ON != 0 {
        c.layer_seq = inst.layer_seq;
    }
    // An inertialized transition evaluates its target alone; the frame before one (unless the
    // pose the frame before showed stands for it: VELOCITY_FROM_LAST_POSE), and its first frame
    // when it decays an offset, also sample where each state stood a frame ago.
    let inertial = kind == source_kind::OFFSET;
    let dead_blend = flags & TRANSITION_DEAD_BLEND != 0;
    let keep_velocity = flags & KEEP_VELOCITY != 0;
    let last_pose = keep_velocity && flags & VELOCITY_FROM_LAST_POSE != 0;
    let switching = inertial && target_started && !dead_blend;
    let previous = (keep_velocity && !last_pose) || switching;
    list.inertia = if inertial {
        if dead_blend {
            inertia::DEAD_BLEND
        } else {
            inertia::OFFSET
        }
    } else {
        0
    } | if switching { inertia::SWITCH } else { 0 }
        | if keep_velocity { inertia::VELOCITY } else { 0 }
        | if previous { inertia::PREVIOUS } else { 0 }
        | if last_pose { inertia::LAST_POSE } else { 0 }
        | if flags & KEEP_POSE != 0 { inertia::KEEP_POSE } else { 0 };
    let mut beta = 1.0;
    let mut beta_previous = 1.0;
    if kind != source_kind::NONE {
        // Elapsed seconds, exact as every clock; from 0 up. The shader's 64-bit sum wraps (only a
        // clock not made by this crate could reach it).
        let elapsed = (c.transition_time.get().wrapping_add(ticks_from_f32(dt))).clamp(0, TICK_LIMIT);
        c.transition_time = Ticks::new(elapsed);
        let seconds = c.transition_time.to_f32();
        list.inertia_time = seconds;
        if !inertial {
            let smooth = (flags & TRANSITION_SMOOTH) != 0;
            beta = transition_weight(seconds, p.transition_duration, smooth);
            beta_previous = transition_weight(seconds - dt, p.transition_duration, smooth);
        }
    }
    // s = 0: the target, 1: the source, 2 and on: the layers — one call of play_state for all.
    for s in 0..2 + MAX_LAYERS {
        let mut clip = p.clip;
        let mut tree_offset = p.tree_offset;
        let mut tree_nodes = p.tree_nodes;
        let mut rate = p.rate;
        let mut loop_mode = p.loop_mode;
        let mut loop_count = p.loop_count;
        let mut params = p.params;
        let mut time = c.time;
        let mut loops = c.loops;
        // A machine's target that starts this frame is where its clock put it.
        let mut state_dt = dt;
        let mut scale = beta;
        let mut scale_previous = beta_previous;
        let mut layer_id = 0;
        let mut source = EventSource {
            character: events.as_ref().map_or(0, |(f, i, _)| f.first_instance.wrapping_add(*i)),
            state: s,
            started: target_started,
            weight: 1.0,
            root: root_motion && s < 2,
            frame: events.as_ref().map_or(0, |(f, _, _)| f.frame),
        };
        if s == 0 && target_started && p.start_still {
            state_dt = 0.0;
        }
        if s == 1 {
            source.started = false;
            if kind == source_kind::SNAPSHOT {
                add_sample(list, SNAPSHOT_CLIP, 0.0, 1.0 - beta, 0);
                if previous {
                    add_sample(list, SNAPSHOT_CLIP, 0.0, 1.0 - beta_previous, inertia::PREVIOUS_TAG);
                }
                if root_motion {
                    root.q += Vec4::new(0.0, 0.0, 0.0, 1.0 - beta);
                }
                continue;
            }
            // A cross-fade over by this frame still has its source sampled at the previous
            // frame's times when the frame needs them (with weight 0 now: nothing else of it).
            if kind == source_kind::NONE || inertial || !(beta < 1.0 || (previous && beta_previous < 1.0)) {
                continue;
            }
            clip = p.source_clip;
            tree_offset = p.source_tree_offset;
            tree_nodes = 0;
            if kind == source_kind::TREE {
                tree_nodes = p.source_tree_nodes;
            }
            rate = p.source_rate;
            loop_mode = p.source_loop_mode;
            loop_count = p.source_loop_count;
            params = p.source_params;
            time = c.source_time;
            loops = c.source_loops;
            state_dt = if flags & TRANSITION_FROZEN != 0 { 0.0 } else { dt };
            scale = 1.0 - beta;
            scale_previous = 1.0 - beta_previous;
        } else if s >= 2 {
            let k = (s - 2) as usize;
            if flags & (LAYER_ON << k) == 0 {
                continue;
            }
            let layer = &inst.layers[k];
            let def = &layer_defs[layer.def as usize];
            // Layers read the instance's own parameters (a machine's trees read the machine's).
            params = if inst.flags & MACHINE != 0 {
                inst.params
            } else {
                p.params
            };
            source.started = false;
            if (layer.seq.wrapping_sub(seen_layer_seq) as i32) > 0 {
                c.layer_time[k] = Ticks::from_f32(layer.start_time);
                source.started = true;
            }
            let mut weight = layer.weight;
            let mut previous_weight = layer.weight;
            if kind == source_kind::SNAPSHOT {
                weight *= beta;
                previous_weight *= beta_previous;
            }
            list.layers[k] = LayerApply {
                mode: def.mode,
                weight,
                mask: def.mask,
                previous_weight,
            };
            if def.mode == layer_mode::ADDITIVE_MESH {
                list.mesh_additive = 1;
            }
            if def.tree_nodes == 0 && def.time_parameter < 4 {
                let t = params[def.time_parameter as usize].clamp(0.0, lib.clips()[def.clip as usize].duration);
                c.layer_time[k] = Ticks::from_f32(t);
                add_sample(list, def.clip, t, 1.0, k as u32 + 1);
                if previous {
                    add_sample(list, def.clip, t, 1.0, k as u32 + 1 + inertia::PREVIOUS_TAG);
                }
                continue;
            }
            clip = def.clip;
            tree_offset = def.tree_offset;
            tree_nodes = def.tree_nodes;
            rate = layer.rate;
            loop_mode = def.loop_mode;
            loop_count = 1;
            time = c.layer_time[k];
            loops = 0;
            scale = 1.0;
            scale_previous = 1.0;
            layer_id = k as u32 + 1;
            source.weight = weight;
        }
        let log = match &mut events {
            Some((frame, _, log)) if frame.flags & FRAME_EVENTS != 0 => Some(&mut **log),
            _ => None,
        };
        let ct = play_state(
            lib,
            list,
            clip,
            tree_offset,
            tree_nodes,
            params,
            rate,
            loop_mode,
            loop_count,
            time,
            loops,
            state_dt,
            scale,
            if previous { scale_previous } else { 0.0 },
            layer_id,
            &source,
            log,
            &mut root,
        );
        if s == 0 {
            c.time = ct.time;
            c.loops = ct.loops;
        } else if s == 1 {
            c.source_time = ct.time;
            c.source_loops = ct.loops;
        } else {
            c.layer_time[(s - 2) as usize] = ct.time;
        }
    }
    let curves = events.as_ref().is_some_and(|(f, _, _)| f.flags & FRAME_CURVES != 0);
    if let Some((out, world)) = root_out {
        if root_motion {
            let ratio = lib.retarget_at(inst.skeleton).map_or(1.0, |r| r.ratio);
            *world = move_root(out, inst, &root, ratio, dt);
        }
        if curves {
            out.curves = blend_curves(lib, list);
        }
    }
    store_clock(clock_in, &c, units)
}

/// What instance `inst` plays by its own fields. WGSL `instance_playback`.
#[must_use]
pub(crate) fn instance_playback(inst: &GpuInstance) -> Playback {
    let kind = inst.source_kind();
    let mut p = Playback {
        flags: inst.flags,
        seq: inst.seq,
        start_time: inst.start_time,
        transition_duration: inst.transition_duration,
        params: inst.params,
        source_params: inst.params,
        clip: inst.clip,
        tree_offset: inst.tree_offset,
        tree_nodes: inst.tree_nodes,
        rate: inst.rate,
        loop_mode: inst.loop_mode,
        loop_count: inst.loop_count,
        ..Playback::default()
    };
    if kind == source_kind::CLIP || kind == source_kind::TREE {
        p.source_clip = inst.source_clip;
        p.source_tree_offset = inst.source_tree_offset;
        p.source_tree_nodes = inst.source_tree_nodes;
        p.source_rate = inst.source_rate;
        p.source_loop_mode = inst.source_loop_mode;
        p.source_loop_count = inst.source_loop_count;
    }
    p
}

/// The [`LAYER_ON`] bits of every layer.
const LAYERS_ON: u32 = LAYER_ON * ((1 << MAX_LAYERS) - 1);

/// The units of its clock (`CLOCK_UNIT_*`) beside the target's that a frame of a character
/// playing with `flags` reads and writes: where the frame may change them. WGSL: in `advance_instance`.
fn clock_units(flags: u32, target_started: bool) -> u32 {
    let layers_on = flags & LAYERS_ON;
    let switched = target_started || flags & 15 != source_kind::NONE;
    let mut units = 0;
    if switched || layers_on != 0 {
        units |= CLOCK_UNIT_SOURCE;
    }
    if switched || layers_on & LAYER_ON != 0 {
        units |= CLOCK_UNIT_TRANSITION;
    }
    if layers_on & !LAYER_ON != 0 {
        units |= CLOCK_UNIT_LAYERS;
    }
    units
}

/// A clock's 16-byte units.
type ClockUnits = [[u32; 4]; 4];

/// `clock`'s unit 0 and its `units`, the others zero: what the stage reads. WGSL
/// `load_clock_target` and `load_clock_units`.
fn load_clock_units(clock: &GpuClock, units: u32) -> GpuClock {
    let from: ClockUnits = bytemuck::cast(*clock);
    let mut to = ClockUnits::default();
    for (k, (to, from)) in to.iter_mut().zip(from).enumerate() {
        if k == 0 || units & (1 << k) != 0 {
            *to = from;
        }
    }
    bytemuck::cast(to)
}

/// `old` with unit 0 and the `units` of `new`: what the stage leaves. WGSL `store_clock`.
fn store_clock(old: &GpuClock, new: &GpuClock, units: u32) -> GpuClock {
    let mut to: ClockUnits = bytemuck::cast(*old);
    let from: ClockUnits = bytemuck::cast(*new);
    for (k, (to, from)) in to.iter_mut().zip(from).enumerate() {
        if k == 0 || units & (1 << k) != 0 {
            *to = from;
        }
    }
    bytemuck::cast(to)
}

/// The checks of [`clock`]: the instances, clocks, blend lists (and outputs, when given) hold the
/// frame's instances, whose targets exist.
fn check(lib: &AnimationLibrary, page: &PageBuffers<'_>) -> Result<()> {
    let mut buffers = vec![
        ("instances", page.instances.len()),
        ("clocks", page.clocks.len()),
        ("blend lists", page.blend_lists.len()),
    ];
    if let Some(outputs) = &page.outputs {
        buffers.push(("outputs", outputs.len()));
    }
    let n = instance_count(page.frame, &buffers)?;
    for (i, inst) in page.instances[..n].iter().enumerate() {
        targets(lib, page.layer_defs, i, inst)?;
    }
    super::checks::machines(lib, page, n)
}

/// Stage `clock`: advances each of the frame's instances' clocks by `frame.dt` and writes its
/// blend list. WGSL `clock` (kernel: [`advance_instance`](crate::cpu::advance_instance)). Binds the
/// page's frame, layer definitions, instances, clocks and blend lists, and its optional buffers:
/// when `frame.flags` has [`FRAME_EVENTS`](crate::layout::FRAME_EVENTS), every clip event a
/// state of an instance crossed is appended to `events` (records name the instance as
/// `frame.first_instance + i`); with `outputs`, instances with [`ROOT_MOTION`] keep the frame's
/// root displacement there and their moved world in `instances`, and with float curves in the
/// library ([`FRAME_CURVES`]) each instance's curves are written there. Without `outputs` no
/// world moves.
///
/// Errors (nothing written): buffers with fewer records than `frame.instance_count` (the
/// outputs too, when given); an instance whose clip, tree, cross-fade source or layer definition
/// (in `layer_defs`) does not exist.
pub fn clock(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) -> Result<()> {
    check(lib, page)?;
    kernel(lib, page);
    Ok(())
}

/// Stage `clock`'s body, unchecked: one invocation per instance; events appended to the page's
/// log (or to one of no capacity); with outputs, the root motion of instances with `ROOT_MOTION`
/// kept there and their worlds written.
pub(crate) fn kernel(lib: &AnimationLibrary, page: &mut PageBuffers<'_>) {
    let frame = page.frame;
    let mut no_log = EventLog::default();
    let log = page.events.as_deref_mut().unwrap_or(&mut no_log);
    let (mut machine_states, mut machine_parameters) = machine_sections(&mut page.sections);
    let mut machine_events = Vec::new();
    for i in 0..frame.instance_count as usize {
        let mut list = BlendList::default();
        let mut world = page.instances[i].world;
        let inst = page.instances[i];
        // A character with a machine plays what its rules decide (checked: its sections hold it).
        let p = match (&mut machine_states, &mut machine_parameters) {
            (Some(states), Some(params)) if inst.flags & MACHINE != 0 => {
                machine_events.clear();
                let mf = machine_step(lib, &mut states[i], &mut params[i], frame.dt, &mut machine_events);
                if frame.flags & FRAME_EVENTS != 0 {
                    for e in &machine_events {
                        log.append(machine_record(frame, i as u32, e));
                    }
                }
                let p = machine_playback(lib, &mf, &params[i], inst.flags);
                // The sample stage reads the transition's length from the instance.
                if p.flags & 15 != source_kind::NONE {
                    page.instances[i].transition_duration = p.transition_duration;
                }
                p
            }
            _ => instance_playback(&inst),
        };
        page.clocks[i] = advance_instance(
            lib,
            page.layer_defs,
            &inst,
            &p,
            &page.clocks[i],
            frame.dt,
            &mut list,
            Some((frame, i as u32, &mut *log)),
            page.outputs.as_deref_mut().map(|r| (&mut r[i], &mut world)),
        );
        page.instances[i].world = world;
        page.blend_lists[i] = list;
        if frame.flags & crate::layout::FRAME_CULL != 0
            && let Some(outputs) = page.outputs.as_deref_mut()
        {
            outputs[i].evaluate = super::cull::marks(frame, &page.instances[i], i as u32, &list, outputs[i].evaluate);
            if outputs[i].evaluate & crate::layout::MARK_VAT != 0 {
                page.instances[i].vat_time = super::cull::vat_time(&list);
            }
        }
    }
}

/// The page's machine states and parameter slots, when it has them.
fn machine_sections<'s>(
    sections: &'s mut [(crate::shaders::Resource, &mut [u8])],
) -> (Option<&'s mut [GpuMachineState]>, Option<&'s mut [Slots]>) {
    use crate::shaders::Resource;
    let (mut states, mut params) = (None, None);
    for (resource, bytes) in sections.iter_mut() {
        match resource {
            Resource::MachineStates => states = bytemuck::try_cast_slice_mut(bytes).ok(),
            Resource::MachineParameters => params = bytemuck::try_cast_slice_mut(bytes).ok(),
            _ => {}
        }
    }
    (states, params)
}

/// A machine's event as the event log records it. WGSL `machine_event`.
fn machine_record(frame: &GpuFrame, i: u32, e: &MachineEvent) -> crate::layout::GpuEventRecord {
    crate::layout::GpuEventRecord {
        character: frame.first_instance.wrapping_add(i),
        event: e.kind,
        clip: crate::layout::MACHINE_EVENT_CLIP,
        weight: 1.0,
        frame: frame.frame,
        crossings: 1,
        state: e.index,
        _pad: 0,
    }
}

/// The checked forms of the clock stage's functions, public as `cpu::advance_instance` and
/// `cpu::tree_leaves`.
pub(crate) mod checked {
    use crate::cpu::blend_weights::Leaves;
    use crate::cpu::checks::{state, targets};
    use crate::error::Result;
    use crate::layout::{BlendList, GpuClock, GpuInstance, GpuLayerDef};
    use crate::library::AnimationLibrary;
    use glam::Vec4;

    /// One instance's frame: its new clock, and its blend list written to `list`. `layer_defs` are
    /// the definitions its layers' `def` index. WGSL `advance_instance`.
    ///
    /// Errors: as [`clock`](crate::cpu::clock()) (the instance is instance 0).
    pub fn advance_instance(
        lib: &AnimationLibrary,
        layer_defs: &[GpuLayerDef],
        inst: &GpuInstance,
        clock_in: &GpuClock,
        dt: f32,
        list: &mut BlendList,
    ) -> Result<GpuClock> {
        targets(lib, layer_defs, 0, inst)?;
        let p = crate::cpu::clock::instance_playback(inst);
        Ok(crate::cpu::clock::advance_instance(
            lib, layer_defs, inst, &p, clock_in, dt, list, None, None,
        ))
    }

    /// The clips at the leaves of the `count` blend nodes from `offset` (a tree of the library:
    /// `lib.blend().trees[t].node_offset` and `node_count`), with their weights for `params`. WGSL
    /// `tree_leaves`.
    ///
    /// Errors: nodes beyond the library's.
    pub fn tree_leaves(lib: &AnimationLibrary, offset: u32, count: u32, params: Vec4) -> Result<Leaves> {
        state(lib, 0, "", 0, offset, count.max(1))?;
        Ok(crate::cpu::blend_weights::tree_leaves(lib, offset, count, params))
    }
}

#[cfg(test)]
mod tests;
