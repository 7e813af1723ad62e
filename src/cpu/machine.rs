//! The state-machine rules of one frame of one character, as the project's state-machine
//! reference fixes them: advance the clocks, end a transition that reached its duration, choose
//! at most one transition, fire it, consume its triggers, emit events. Integer arithmetic on the
//! clocks (normalized time in [`MACHINE_LOOP_TICKS`] per loop, never wrapped), so that exact hits
//! are decided alike wherever the rules run.
#![expect(
    clippy::neg_cmp_op_on_partial_ord,
    reason = "`!(x > 0.0)` also rejects NaN, exactly as the shader does"
)]

use super::blend_weights::tree_leaves;
use super::ticks::{ratio_ticks, ticks_from_f32};
use crate::layout::{
    GpuMachine, GpuMachineCondition, GpuMachineState, GpuMachineStateDef, GpuMachineTransition, KEEP_POSE,
    KEEP_VELOCITY, LOOP_FOREVER, LOOP_ONCE, MACHINE_FROM_POSE, MACHINE_LOOP_TICKS, MACHINE_NONE,
    MACHINE_PLAYBACK_KEEPS, MACHINE_STATE_LOOPS, MAX_MACHINE_PARAMETERS, TICK_LIMIT, TRANSITION_SMOOTH, Ticks,
    machine_condition as op, machine_event, machine_transition as tr, source_kind,
};
use crate::library::AnimationLibrary;
use glam::Vec4;

/// A character's parameter slots.
pub type Slots = [u32; MAX_MACHINE_PARAMETERS as usize];

/// One event of a character's machine this frame: `kind` is `machine_event::*`, `index` the
/// state (entered, exited) or the transition (started, ended).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MachineEvent {
    /// `machine_event::*`.
    pub kind: u32,
    /// The state or transition it names (relative to its machine).
    pub index: u32,
}

/// The blend parameters a state's tree reads: its bound float slots, 0 where unbound.
#[must_use]
pub fn tree_parameters(def: &GpuMachineStateDef, params: &Slots) -> Vec4 {
    let read = |p: u32| {
        if p < MAX_MACHINE_PARAMETERS {
            f32::from_bits(params[p as usize])
        } else {
            0.0
        }
    };
    Vec4::new(
        read(def.tree_parameters.x),
        read(def.tree_parameters.y),
        read(def.tree_parameters.z),
        read(def.tree_parameters.w),
    )
}

/// A state's motion length in seconds this frame: its clip's duration, or its tree's children's
/// durations weighted by this frame's weights (0 when no weight is above 0). WGSL
/// `machine_state_length`.
#[must_use]
pub fn state_length(lib: &AnimationLibrary, def: &GpuMachineStateDef, params: &Slots) -> f32 {
    if def.tree_nodes == 0 {
        return lib.clips()[def.clip as usize].duration;
    }
    let leaves = tree_leaves(lib, def.tree_offset, def.tree_nodes, tree_parameters(def, params));
    let (mut total, mut synced) = (0.0f32, 0.0f32);
    for m in 0..leaves.count as usize {
        total += leaves.weights[m];
        synced += leaves.weights[m] * lib.clips()[leaves.clips[m] as usize].duration;
    }
    if total > 0.0 { synced / total } else { 0.0 }
}

/// A state's rate this frame: its speed times its speed parameter.
#[must_use]
pub fn state_rate(def: &GpuMachineStateDef, params: &Slots) -> f32 {
    if def.speed_parameter < MAX_MACHINE_PARAMETERS {
        def.speed * f32::from_bits(params[def.speed_parameter as usize])
    } else {
        def.speed
    }
}

/// A state's normalized clock advanced by `dt`: by `rate · dt / length` loops, rounded once to a
/// tick, saturated; a state that does not loop clamps to [0, 1]. WGSL `advance_machine_clock`.
#[must_use]
pub fn advance_clock(time: i64, rate: f32, dt: f32, length: f32, looping: bool) -> i64 {
    let t = time
        .saturating_add(ratio_ticks(rate, dt, length))
        .clamp(-TICK_LIMIT, TICK_LIMIT);
    if looping { t } else { t.clamp(0, MACHINE_LOOP_TICKS) }
}

/// Whether a clock that went from `t0` to `t1` this frame crossed an exit point of exit time `e`:
/// forward, a point of `(t0, t1]`, the points being `e, e + 1, …` for `e < 1` and `e` alone for
/// `e >= 1`; backward, the same on the mirrored clock `1 − t`. A zero advance crosses nothing.
/// WGSL `exit_crossed`.
#[must_use]
pub fn exit_crossed(t0: i64, t1: i64, e: f32) -> bool {
    if t0 == t1 {
        return false;
    }
    let (a, b) = if t1 > t0 {
        (t0, t1)
    } else {
        (MACHINE_LOOP_TICKS - t0, MACHINE_LOOP_TICKS - t1)
    };
    let e = ticks_from_f32(e);
    // The first point after `a`: `e` itself, or `e` plus the whole loops past it, plus one.
    let p = if e >= MACHINE_LOOP_TICKS || a < e {
        e
    } else {
        e + (((a - e) >> crate::layout::TICK_BITS) + 1) * MACHINE_LOOP_TICKS
    };
    a < p && p <= b
}

/// Whether every condition of `t` holds for `params`. WGSL `conditions_hold`.
#[must_use]
pub fn conditions_hold(conditions: &[GpuMachineCondition], t: &GpuMachineTransition, params: &Slots) -> bool {
    let list = &conditions[t.condition_offset as usize..][..t.condition_count as usize];
    list.iter().all(|c| {
        let slot = params[(c.parameter % MAX_MACHINE_PARAMETERS) as usize];
        let (f, cf) = (f32::from_bits(slot), f32::from_bits(c.value));
        let (i, ci) = (slot as i32, c.value as i32);
        match c.op {
            op::FLOAT_GREATER => f > cf,
            op::FLOAT_LESS => f < cf,
            op::INT_GREATER => i > ci,
            op::INT_LESS => i < ci,
            op::INT_EQUAL => i == ci,
            op::INT_NOT_EQUAL => i != ci,
            op::TRUE | op::TRIGGER => slot != 0,
            op::FALSE => slot == 0,
            _ => false,
        }
    })
}

/// What a frame of the rules leaves for the clock: the machine after step 1 (what plays this
/// frame), after step 4, and the transition fired, if any. WGSL `MachineFrame`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineFrame {
    /// The machine after step 1.
    pub shown: GpuMachineState,
    /// The machine after the frame.
    pub after: GpuMachineState,
    /// Whether a transition fired.
    pub fired: bool,
    /// The transition fired ([`MACHINE_NONE`] for none).
    pub transition: u32,
}

/// One frame of one character's machine: `ms` and its parameter slots `params` (triggers
/// consumed) are updated, and the frame's events pushed to `events` in the order they happen.
/// A character without a machine (`ms.machine` is [`MACHINE_NONE`]) is left as it is. Each
/// state's length is evaluated once (slot 0: the state playing or the transition's source; slot
/// 1: its destination) and a transition fires at one place after the candidates, as the shader
/// does. WGSL `machine_step`.
pub fn machine_step(
    lib: &AnimationLibrary,
    ms: &mut GpuMachineState,
    params: &mut Slots,
    dt: f32,
    events: &mut Vec<MachineEvent>,
) -> MachineFrame {
    let machines = lib.machines();
    let mut out = MachineFrame {
        shown: *ms,
        after: *ms,
        fired: false,
        transition: MACHINE_NONE,
    };
    if ms.machine as usize >= machines.machines.len() {
        return out;
    }
    let m: GpuMachine = machines.machines[ms.machine as usize];
    let last = m.state_count.max(1) - 1;
    let state = |s: u32| machines.states[(m.state_offset + s.min(last)) as usize];
    let transition = |k: u32| machines.transitions[(m.transition_offset + k) as usize];
    let mut push = |kind: u32, index: u32| events.push(MachineEvent { kind, index });

    // 1. Advance the clocks of the two slots; a transition whose progress reaches its duration
    // ends.
    let was_running = ms.transition != MACHINE_NONE;
    let (mut before, mut after, mut lengths) = ([0i64; 2], [0i64; 2], [0f32; 2]);
    for s in 0..if was_running { 2 } else { 1 } {
        let def = state(if s == 1 { ms.destination } else { ms.current });
        let t = if s == 1 { ms.destination_time } else { ms.time }.get();
        lengths[s] = state_length(lib, &def, params);
        before[s] = t;
        after[s] = advance_clock(
            t,
            state_rate(&def, params),
            dt,
            lengths[s],
            def.flags & MACHINE_STATE_LOOPS != 0,
        );
    }
    if was_running {
        let progress = ms
            .progress
            .get()
            .saturating_add(ticks_from_f32(dt))
            .clamp(0, TICK_LIMIT);
        ms.progress = Ticks::new(progress);
        ms.destination_time = Ticks::new(after[1]);
        if progress >= ticks_from_f32(ms.duration) {
            push(machine_event::STATE_ENTERED, ms.destination);
            push(machine_event::TRANSITION_ENDED, ms.transition);
            ms.current = ms.destination;
            (before[0], after[0], lengths[0]) = (before[1], after[1], lengths[1]);
            end_transition(ms);
        }
    }
    ms.time = Ticks::new(after[0]);
    out.shown = *ms;
    out.after = *ms;

    // 2. The candidates, in priority order: the Any transitions, then a state's.
    let running = ms.transition;
    let (list_state, list_slot) = if running == MACHINE_NONE {
        (ms.current, 0)
    } else {
        match (transition(running).flags >> tr::INTERRUPT_SHIFT) & 3 {
            tr::INTERRUPT_SOURCE => (ms.current, 0),
            tr::INTERRUPT_DESTINATION => (ms.destination, 1),
            _ => return out,
        }
    };
    let own = state(list_state);
    let any = (m.any_offset..m.any_offset + m.any_count).map(|c| (c, true));
    let owned = (own.candidate_offset..own.candidate_offset + own.candidate_count).map(|c| (c, false));
    let chosen = any.chain(owned).find_map(|(c, is_any)| {
        let k = machines.candidates[c as usize];
        if k == running {
            return None;
        }
        let t = transition(k);
        // The state the transition leaves, and the slot whose clock its exit condition reads.
        let (source, slot) = if !is_any {
            (list_state, list_slot)
        } else if running == MACHINE_NONE {
            (ms.current, 0)
        } else {
            (ms.destination, 1)
        };
        if is_any && t.destination == source && t.flags & tr::TO_SELF == 0 {
            return None;
        }
        let exit = t.flags & tr::HAS_EXIT == 0 || exit_crossed(before[slot], after[slot], t.exit_time);
        (conditions_hold(&machines.conditions, &t, params) && exit).then_some((k, source, slot))
    });
    let Some((k, source, slot)) = chosen else {
        return out;
    };

    // 4. Fire: the source keeps its clock, the destination starts at the offset.
    let t = transition(k);
    let seconds = if t.flags & tr::FIXED_DURATION != 0 {
        t.duration
    } else {
        t.duration * lengths[slot]
    };
    let conditions = &machines.conditions[t.condition_offset as usize..][..t.condition_count as usize];
    for cond in conditions.iter().filter(|cond| cond.op == op::TRIGGER) {
        params[(cond.parameter % MAX_MACHINE_PARAMETERS) as usize] = 0;
    }
    push(machine_event::STATE_EXITED, source);
    push(machine_event::TRANSITION_STARTED, k);
    ms.current = source;
    ms.time = Ticks::new(after[slot]);
    ms.destination = t.destination;
    ms.destination_time = Ticks::new(ticks_from_f32(t.offset));
    ms.transition = k;
    ms.progress = Ticks::new(0);
    ms.duration = seconds;
    ms.fired = ms.fired.wrapping_add(1);
    if running == MACHINE_NONE {
        ms.flags &= !MACHINE_FROM_POSE;
    } else {
        ms.flags |= MACHINE_FROM_POSE;
    }
    if ticks_from_f32(seconds) <= 0 {
        push(machine_event::STATE_ENTERED, t.destination);
        push(machine_event::TRANSITION_ENDED, k);
        ms.current = t.destination;
        ms.time = ms.destination_time;
        end_transition(ms);
    }
    out.after = *ms;
    out.fired = true;
    out.transition = k;
    out
}

/// No transition runs any more.
fn end_transition(ms: &mut GpuMachineState) {
    ms.destination = MACHINE_NONE;
    ms.transition = MACHINE_NONE;
    ms.destination_time = Ticks::new(0);
    ms.progress = Ticks::new(0);
    ms.duration = 0.0;
    ms.flags &= !MACHINE_FROM_POSE;
}

/// A running transition's weight: `min(1, progress / duration)`, 1 for a duration of 0 (the
/// printed weight; a curve shapes only the pose).
#[must_use]
pub fn transition_weight(ms: &GpuMachineState) -> f32 {
    let seconds = ms.progress.to_f32();
    if !(ms.duration > 0.0) {
        return 1.0;
    }
    (seconds / ms.duration).min(1.0)
}

/// A normalized clock in loops.
#[must_use]
pub fn loops_of(t: Ticks) -> f64 {
    t.get() as f64 / MACHINE_LOOP_TICKS as f64
}

/// What a character plays this frame: its target and, while a transition runs, its source and
/// the transition (kind and bits as `GpuInstance::flags` has them), from the instance's own
/// fields ([`crate::cpu::clock`]'s `instance_playback`) or from its machine
/// ([`machine_playback`]). A target that starts this frame with `start_still` is sampled where
/// it starts (a machine's clock already advanced it). WGSL `Playback`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[expect(missing_docs, reason = "the fields of GpuInstance of the same names")]
pub struct Playback {
    pub flags: u32,
    pub seq: u32,
    pub start_time: f32,
    pub transition_duration: f32,
    pub params: Vec4,
    pub source_params: Vec4,
    pub clip: u32,
    pub tree_offset: u32,
    pub tree_nodes: u32,
    pub rate: f32,
    pub loop_mode: u32,
    pub loop_count: u32,
    pub source_clip: u32,
    pub source_tree_offset: u32,
    pub source_tree_nodes: u32,
    pub source_rate: f32,
    pub source_loop_mode: u32,
    pub source_loop_count: u32,
    pub start_still: bool,
}

/// What a character's machine plays this frame, `mf` being its frame of the rules, `params` its
/// parameter slots and `flags` its instance's: the machine as step 1 left it, so that a
/// transition fired this frame shows from the next (its destination at weight 0 now, its pose
/// the one shown), except one of duration 0, which cuts to its destination at its offset now.
/// The frame a transition fires keeps what it blends from: the pose (interrupting another) and
/// its velocity (inertialized). WGSL `machine_playback`.
#[must_use]
pub fn machine_playback(lib: &AnimationLibrary, mf: &MachineFrame, params: &Slots, flags: u32) -> Playback {
    let machines = lib.machines();
    let m = machines.machines[mf.shown.machine as usize];
    let last = m.state_count.max(1) - 1;
    let state = |s: u32| machines.states[(m.state_offset + s.min(last)) as usize];
    let transition = |k: u32| machines.transitions[(m.transition_offset + k) as usize];
    let loop_mode = |def: &GpuMachineStateDef| {
        if def.flags & MACHINE_STATE_LOOPS != 0 {
            LOOP_FOREVER
        } else {
            LOOP_ONCE
        }
    };
    let cut = mf.fired && mf.after.transition == MACHINE_NONE;
    let shown = if cut { mf.after } else { mf.shown };
    let running = shown.transition != MACHINE_NONE;
    let target = state(if running { shown.destination } else { shown.current });
    let mut start = (if running { shown.destination_time } else { shown.time }).to_f32();
    if target.tree_nodes == 0 {
        start *= lib.clips()[target.clip as usize].duration;
    }
    let mut p = Playback {
        flags: flags & MACHINE_PLAYBACK_KEEPS,
        seq: shown.fired,
        start_time: start,
        params: tree_parameters(&target, params),
        clip: target.clip,
        tree_offset: target.tree_offset,
        tree_nodes: target.tree_nodes,
        rate: state_rate(&target, params),
        loop_mode: loop_mode(&target),
        loop_count: 1,
        start_still: true,
        ..Playback::default()
    };
    p.source_params = p.params;
    if running {
        let t = transition(shown.transition);
        let smooth = if t.flags & tr::SMOOTH != 0 {
            TRANSITION_SMOOTH
        } else {
            0
        };
        p.transition_duration = shown.duration;
        if t.flags & tr::INERTIALIZE != 0 {
            p.flags |= source_kind::OFFSET;
        } else if shown.flags & MACHINE_FROM_POSE != 0 {
            p.flags |= source_kind::SNAPSHOT | smooth;
        } else {
            let source = state(shown.current);
            p.flags |= if source.tree_nodes > 0 {
                source_kind::TREE
            } else {
                source_kind::CLIP
            } | smooth;
            p.source_clip = source.clip;
            p.source_tree_offset = source.tree_offset;
            p.source_tree_nodes = source.tree_nodes;
            p.source_rate = state_rate(&source, params);
            p.source_loop_mode = loop_mode(&source);
            p.source_loop_count = 1;
            p.source_params = tree_parameters(&source, params);
        }
    }
    if mf.fired && !cut {
        if transition(mf.transition).flags & tr::INERTIALIZE != 0 {
            p.flags |= KEEP_POSE | KEEP_VELOCITY;
        } else if mf.after.flags & MACHINE_FROM_POSE != 0 {
            p.flags |= KEEP_POSE;
        }
    }
    p
}
