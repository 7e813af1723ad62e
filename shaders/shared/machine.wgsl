// State machines (the project's state-machine reference): one frame of one character's machine
// in the clock stage, and what it plays. CPU mirror: cpu::machine (the rules, same names, same
// integer arithmetic) and cpu::clock (`machine_playback`).

#define_import_path wgpu_anim::machine

#import wgpu_anim::types::{
    EventRecord, FRAME_EVENTS, LOOP_FOREVER, LOOP_ONCE, MACHINE_CONDITION_FALSE, MACHINE_CONDITION_FLOAT_GREATER,
    MACHINE_CONDITION_FLOAT_LESS, MACHINE_CONDITION_INT_EQUAL, MACHINE_CONDITION_INT_GREATER,
    MACHINE_CONDITION_INT_LESS, MACHINE_CONDITION_INT_NOT_EQUAL, MACHINE_CONDITION_TRIGGER, MACHINE_CONDITION_TRUE,
    KEEP_POSE, KEEP_VELOCITY, MACHINE_EVENT_CLIP, MACHINE_FROM_POSE, MACHINE_PLAYBACK_KEEPS, MACHINE_EVENT_STATE_ENTERED, MACHINE_EVENT_STATE_EXITED, MACHINE_EVENT_TRANSITION_ENDED,
    MACHINE_EVENT_TRANSITION_STARTED, MACHINE_NONE, MACHINE_STATE_LOOPS, MACHINE_TRANSITION_FIXED_DURATION,
    MACHINE_TRANSITION_HAS_EXIT, MACHINE_TRANSITION_INERTIALIZE, MACHINE_TRANSITION_INTERRUPT_DESTINATION,
    MACHINE_TRANSITION_INTERRUPT_SHIFT, MACHINE_TRANSITION_INTERRUPT_SOURCE, MACHINE_TRANSITION_SMOOTH,
    MACHINE_TRANSITION_TO_SELF, MAX_MACHINE_PARAMETERS, Machine, MachineCondition, MachineState, MachineStateDef,
    MachineTransition, SOURCE_CLIP, SOURCE_OFFSET, SOURCE_SNAPSHOT, SOURCE_TREE, TICK_BITS, TRANSITION_SMOOTH, Ticks,
}
#import wgpu_anim::bindings::{character_state, frame, heap, library, machine_parameters_base, machine_states_base}
#import wgpu_anim::library::clip_duration
#import wgpu_anim::blend_weights::tree_leaves
#import wgpu_anim::ticks::{
    i64_add, i64_clamp, i64_less, i64_neg, ratio_ticks, tick_limit, ticks_from_f32, ticks_get, ticks_of, ticks_to_f32,
    u64_shl, u64_shr,
}
#import wgpu_anim::events::append_event

fn machine_at(m: u32) -> Machine {
    let a = heap[library.machines + 2u * m];
    let b = heap[library.machines + 2u * m + 1u];
    return Machine(a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w);
}

fn machine_state_def(k: u32) -> MachineStateDef {
    let a = heap[library.machine_states + 3u * k];
    let b = heap[library.machine_states + 3u * k + 1u];
    let c = heap[library.machine_states + 3u * k + 2u];
    return MachineStateDef(a.x, a.y, a.z, a.w, bitcast<f32>(b.x), b.y, b.z, b.w, c);
}

fn machine_transition(k: u32) -> MachineTransition {
    let a = heap[library.machine_transitions + 2u * k];
    let b = heap[library.machine_transitions + 2u * k + 1u];
    return MachineTransition(a.x, a.y, a.z, a.w, bitcast<f32>(b.x), bitcast<f32>(b.y), bitcast<f32>(b.z), b.w);
}

fn machine_condition(k: u32) -> MachineCondition {
    let a = heap[library.machine_conditions + k];
    return MachineCondition(a.x, a.y, a.z, a.w);
}

fn machine_candidate(k: u32) -> u32 {
    return heap[library.machine_candidates + k / 4u][k % 4u];
}

// Character i's machine (4 units of its page's machine states section).
fn load_machine(i: u32) -> MachineState {
    let b = machine_states_base() + 4u * i;
    let a = character_state[b];
    let c = character_state[b + 1u];
    let d = character_state[b + 2u];
    let f = character_state[b + 3u].x;
    return MachineState(a.x, a.y, a.z, a.w, Ticks(c.x, c.y), Ticks(c.z, c.w), Ticks(d.x, d.y), bitcast<f32>(d.z), d.w, f, array<u32, 3>(0u, 0u, 0u));
}

fn store_machine(i: u32, ms: MachineState) {
    let b = machine_states_base() + 4u * i;
    character_state[b] = vec4<u32>(ms.machine, ms.current, ms.destination, ms.transition);
    character_state[b + 1u] = vec4<u32>(ms.time.lo, ms.time.hi, ms.destination_time.lo, ms.destination_time.hi);
    character_state[b + 2u] = vec4<u32>(ms.progress.lo, ms.progress.hi, bitcast<u32>(ms.duration), ms.fired);
    character_state[b + 3u] = vec4<u32>(ms.flags, 0u, 0u, 0u);
}

// Character i's parameter slots (4 units of its page's machine parameters section).
fn load_parameters(i: u32) -> array<u32, MAX_MACHINE_PARAMETERS> {
    var p: array<u32, MAX_MACHINE_PARAMETERS>;
    let b = machine_parameters_base() + 4u * i;
    for (var u = 0u; u < 4u; u++) {
        let v = character_state[b + u];
        p[4u * u] = v.x;
        p[4u * u + 1u] = v.y;
        p[4u * u + 2u] = v.z;
        p[4u * u + 3u] = v.w;
    }
    return p;
}

// Clears parameter slot k of character i (a consumed trigger).
fn clear_parameter(i: u32, k: u32) {
    let b = machine_parameters_base() + 4u * i + k / 4u;
    character_state[b][k % 4u] = 0u;
}

// One unit of normalized time, 2^TICK_BITS ticks.
fn machine_loop_ticks() -> vec2<u32> {
    return u64_shl(vec2<u32>(1u, 0u), TICK_BITS);
}

fn slot_f32(params: array<u32, MAX_MACHINE_PARAMETERS>, p: u32) -> f32 {
    if (p < MAX_MACHINE_PARAMETERS) {
        return bitcast<f32>(params[p]);
    }
    return 0.0;
}

// Rust: cpu::machine::tree_parameters.
fn tree_parameters(def: MachineStateDef, params: array<u32, MAX_MACHINE_PARAMETERS>) -> vec4<f32> {
    return vec4<f32>(
        slot_f32(params, def.tree_parameters.x),
        slot_f32(params, def.tree_parameters.y),
        slot_f32(params, def.tree_parameters.z),
        slot_f32(params, def.tree_parameters.w),
    );
}

// Rust: cpu::machine::state_length. The blend-tree evaluator is here only in the variant of a
// library whose machines play a blend tree (MACHINE_TREES, shaders::library_defs): a SIMD adapter
// that runs both sides of a branch (lavapipe) would otherwise run it for every clip state too.
fn machine_state_length(def: MachineStateDef, params: array<u32, MAX_MACHINE_PARAMETERS>) -> f32 {
#ifdef MACHINE_TREES
    if (def.tree_nodes != 0u) {
        let leaves = tree_leaves(def.tree_offset, def.tree_nodes, tree_parameters(def, params));
        var total = 0.0;
        var synced = 0.0;
        for (var m = 0u; m < leaves.count; m++) {
            total += leaves.weights[m];
            synced += leaves.weights[m] * clip_duration(leaves.clips[m]);
        }
        if (total > 0.0) {
            return synced / total;
        }
        return 0.0;
    }
#endif
    return clip_duration(def.clip);
}

// Rust: cpu::machine::state_rate.
fn machine_state_rate(def: MachineStateDef, params: array<u32, MAX_MACHINE_PARAMETERS>) -> f32 {
    if (def.speed_parameter < MAX_MACHINE_PARAMETERS) {
        return def.speed * bitcast<f32>(params[def.speed_parameter]);
    }
    return def.speed;
}

// Rust: cpu::machine::advance_clock.
fn advance_machine_clock(time: vec2<u32>, rate: f32, dt: f32, length: f32, looping: bool) -> vec2<u32> {
    let t = i64_clamp(i64_add(time, ratio_ticks(rate, dt, length)), i64_neg(tick_limit()), tick_limit());
    if (looping) {
        return t;
    }
    return i64_clamp(t, vec2<u32>(0u, 0u), machine_loop_ticks());
}

// Rust: cpu::machine::exit_crossed.
fn exit_crossed(t0: vec2<u32>, t1: vec2<u32>, exit_time: f32) -> bool {
    if (all(t0 == t1)) {
        return false;
    }
    let one = machine_loop_ticks();
    var a = t0;
    var b = t1;
    if (i64_less(t1, t0)) {
        a = i64_add(one, i64_neg(t0));
        b = i64_add(one, i64_neg(t1));
    }
    let e = ticks_from_f32(exit_time);
    var p = e;
    if (i64_less(e, one) && !i64_less(a, e)) {
        // e plus the whole loops past it, plus one: a − e ≥ 0, so the shift is a floor.
        let whole = u64_shr(i64_add(a, i64_neg(e)), TICK_BITS);
        p = i64_add(e, u64_shl(i64_add(whole, vec2<u32>(1u, 0u)), TICK_BITS));
    }
    return i64_less(a, p) && !i64_less(b, p);
}

// Rust: cpu::machine::conditions_hold.
fn conditions_hold(t: MachineTransition, params: array<u32, MAX_MACHINE_PARAMETERS>) -> bool {
    var k = 0u;
    while (k < t.condition_count) {
        let c = machine_condition(t.condition_offset + k);
        let slot = params[c.parameter % MAX_MACHINE_PARAMETERS];
        let f = bitcast<f32>(slot);
        let cf = bitcast<f32>(c.value);
        let n = bitcast<i32>(slot);
        let cn = bitcast<i32>(c.value);
        var holds = false;
        switch c.op {
            case MACHINE_CONDITION_FLOAT_GREATER: { holds = f > cf; }
            case MACHINE_CONDITION_FLOAT_LESS: { holds = f < cf; }
            case MACHINE_CONDITION_INT_GREATER: { holds = n > cn; }
            case MACHINE_CONDITION_INT_LESS: { holds = n < cn; }
            case MACHINE_CONDITION_INT_EQUAL: { holds = n == cn; }
            case MACHINE_CONDITION_INT_NOT_EQUAL: { holds = n != cn; }
            case MACHINE_CONDITION_TRUE, MACHINE_CONDITION_TRIGGER: { holds = slot != 0u; }
            case MACHINE_CONDITION_FALSE: { holds = slot == 0u; }
            default: { holds = false; }
        }
        if (!holds) {
            return false;
        }
        k++;
        if (k >= t.condition_count) {
            break;
        }
    }
    return true;
}

// Appends a machine event of character i (`MACHINE_EVENT_*`, naming state or transition
// `index`) to the event log, when the frame detects events.
fn machine_event(i: u32, kind: u32, index: u32) {
    if ((frame.flags & FRAME_EVENTS) != 0u) {
        append_event(EventRecord(frame.first_instance + i, kind, MACHINE_EVENT_CLIP, 1.0, frame.frame, 1u, index, 0u));
    }
}

// No transition runs any more. Rust: cpu::machine::end_transition.
fn end_transition(ms: ptr<function, MachineState>) {
    (*ms).destination = MACHINE_NONE;
    (*ms).transition = MACHINE_NONE;
    (*ms).destination_time = Ticks(0u, 0u);
    (*ms).progress = Ticks(0u, 0u);
    (*ms).duration = 0.0;
    (*ms).flags &= ~MACHINE_FROM_POSE;
}

// What a frame of the rules leaves for the clock: the machine after step 1 (what plays this
// frame), and whether steps 2–4 fired a transition (`fired`), of which kind.
struct MachineFrame {
    shown: MachineState,
    after: MachineState,
    fired: bool,
    transition: u32,
}

// Steps 1 to 4 of one frame of character i's machine, `params` its parameter slots (rules:
// cpu::machine::machine_step, the same in the same order); stores the machine and any consumed
// trigger, and appends the events. Each state's length is evaluated once, at one call site (a
// blend tree's evaluator is compiled once), and a transition fires at one place after the
// candidates' loop.
fn machine_step(i: u32, dt: f32, params: array<u32, MAX_MACHINE_PARAMETERS>) -> MachineFrame {
    var ms = load_machine(i);
    let m = machine_at(ms.machine);
    let last = max(m.state_count, 1u) - 1u;
    // 1. Advance the clocks of slot 0 (the state playing, or the transition's source) and slot
    // 1 (its destination); a transition whose progress reaches its duration ends.
    let was_running = ms.transition != MACHINE_NONE;
    var before: array<vec2<u32>, 2>;
    var after: array<vec2<u32>, 2>;
    var lengths: array<f32, 2>;
    // The loops here test at their end: a SIMD adapter that runs both sides of a branch
    // (lavapipe) runs a `for` loop's body once more, masked, to find every lane done.
    var s = 0u;
    loop {
        let def = machine_state_def(m.state_offset + min(select(ms.current, ms.destination, s == 1u), last));
        let t = select(ticks_get(ms.time), ticks_get(ms.destination_time), s == 1u);
        lengths[s] = machine_state_length(def, params);
        before[s] = t;
        after[s] = advance_machine_clock(t, machine_state_rate(def, params), dt, lengths[s], (def.flags & MACHINE_STATE_LOOPS) != 0u);
        s++;
        if (s >= select(1u, 2u, was_running)) {
            break;
        }
    }
    if (was_running) {
        let progress = i64_clamp(i64_add(ticks_get(ms.progress), ticks_from_f32(dt)), vec2<u32>(0u, 0u), tick_limit());
        ms.progress = ticks_of(progress);
        ms.destination_time = ticks_of(after[1]);
        if (!i64_less(progress, ticks_from_f32(ms.duration))) {
            machine_event(i, MACHINE_EVENT_STATE_ENTERED, ms.destination);
            machine_event(i, MACHINE_EVENT_TRANSITION_ENDED, ms.transition);
            ms.current = ms.destination;
            before[0] = before[1];
            after[0] = after[1];
            lengths[0] = lengths[1];
            end_transition(&ms);
        }
    }
    ms.time = ticks_of(after[0]);
    var out = MachineFrame(ms, ms, false, MACHINE_NONE);
    // 2. The candidates, in priority order: the Any transitions, then a state's.
    let running = ms.transition;
    var list_state = ms.current;
    var list_slot = 0u;
    if (running != MACHINE_NONE) {
        let interruption = (machine_transition(m.transition_offset + running).flags >> MACHINE_TRANSITION_INTERRUPT_SHIFT) & 3u;
        if (interruption == MACHINE_TRANSITION_INTERRUPT_DESTINATION) {
            list_state = ms.destination;
            list_slot = 1u;
        } else if (interruption != MACHINE_TRANSITION_INTERRUPT_SOURCE) {
            store_machine(i, ms);
            return out;
        }
    }
    let own = machine_state_def(m.state_offset + min(list_state, last));
    let count = m.any_count + own.candidate_count;
    var chosen = MACHINE_NONE;
    var source = list_state;
    var slot = list_slot;
    var n = 0u;
    while (n < count) {
        let is_any = n < m.any_count;
        let k = machine_candidate(select(own.candidate_offset + n - m.any_count, m.any_offset + n, is_any));
        let t = machine_transition(m.transition_offset + k);
        // The state the transition leaves, and the slot whose clock its exit condition reads.
        var from_state = list_state;
        var from_slot = list_slot;
        if (is_any) {
            from_slot = select(0u, 1u, running != MACHINE_NONE);
            from_state = select(ms.current, ms.destination, from_slot == 1u);
        }
        // The running transition, and an Any transition to the state it leaves unless `to_self`,
        // are skipped.
        let skipped = k == running || (is_any && t.destination == from_state && (t.flags & MACHINE_TRANSITION_TO_SELF) == 0u);
        if (!skipped && conditions_hold(t, params) && ((t.flags & MACHINE_TRANSITION_HAS_EXIT) == 0u || exit_crossed(before[from_slot], after[from_slot], t.exit_time))) {
            chosen = k;
            source = from_state;
            slot = from_slot;
            break;
        }
        n++;
        if (n >= count) {
            break;
        }
    }
    if (chosen == MACHINE_NONE) {
        store_machine(i, ms);
        return out;
    }
    // 4. Fire: the source keeps its clock, the destination starts at the offset.
    let t = machine_transition(m.transition_offset + chosen);
    var seconds = t.duration;
    if ((t.flags & MACHINE_TRANSITION_FIXED_DURATION) == 0u) {
        seconds = t.duration * lengths[slot];
    }
    for (var q = 0u; q < t.condition_count; q++) {
        let cond = machine_condition(t.condition_offset + q);
        if (cond.op == MACHINE_CONDITION_TRIGGER) {
            clear_parameter(i, cond.parameter % MAX_MACHINE_PARAMETERS);
        }
    }
    machine_event(i, MACHINE_EVENT_STATE_EXITED, source);
    machine_event(i, MACHINE_EVENT_TRANSITION_STARTED, chosen);
    ms.current = source;
    ms.time = ticks_of(after[slot]);
    ms.destination = t.destination;
    ms.destination_time = ticks_of(ticks_from_f32(t.offset));
    ms.transition = chosen;
    ms.progress = Ticks(0u, 0u);
    ms.duration = seconds;
    ms.fired += 1u;
    ms.flags = select(ms.flags & ~MACHINE_FROM_POSE, ms.flags | MACHINE_FROM_POSE, running != MACHINE_NONE);
    if (!i64_less(vec2<u32>(0u, 0u), ticks_from_f32(seconds))) {
        machine_event(i, MACHINE_EVENT_STATE_ENTERED, t.destination);
        machine_event(i, MACHINE_EVENT_TRANSITION_ENDED, chosen);
        ms.current = t.destination;
        ms.time = ms.destination_time;
        end_transition(&ms);
    }
    out.after = ms;
    out.fired = true;
    out.transition = chosen;
    store_machine(i, ms);
    return out;
}

// What a character plays this frame: its target and, while a transition runs, its source and
// the transition (kind and bits as `Instance::flags` has them), from the instance's own fields
// (clock.wgsl's `instance_playback`) or from its machine (`machine_playback`). A target that
// starts this frame with `start_still` is sampled where it starts (a machine's clock already
// advanced it). Rust: cpu::clock::Playback.
struct Playback {
    flags: u32,
    seq: u32,
    start_time: f32,
    transition_duration: f32,
    params: vec4<f32>,
    source_params: vec4<f32>,
    clip: u32,
    tree_offset: u32,
    tree_nodes: u32,
    rate: f32,
    loop_mode: u32,
    loop_count: u32,
    source_clip: u32,
    source_tree_offset: u32,
    source_tree_nodes: u32,
    source_rate: f32,
    source_loop_mode: u32,
    source_loop_count: u32,
    start_still: bool,
}

// What a character's machine plays this frame, `params` its parameter slots (Rust:
// cpu::machine::machine_playback): the
// machine as step 1 left it, so that a transition fired this frame shows from the next (its
// destination at weight 0 now, its pose the one shown), except one of duration 0, which cuts to
// its destination at its offset now. The frame a transition fires keeps what it blends from:
// the pose (interrupting another) and its velocity (inertialized). `flags` are the instance's.
fn machine_playback(mf: MachineFrame, params: array<u32, MAX_MACHINE_PARAMETERS>, flags: u32) -> Playback {
    let m = machine_at(mf.shown.machine);
    let last = max(m.state_count, 1u) - 1u;
    let cut = mf.fired && mf.after.transition == MACHINE_NONE;
    var shown = mf.shown;
    if (cut) {
        shown = mf.after;
    }
    var p: Playback;
    p.flags = flags & MACHINE_PLAYBACK_KEEPS;
    p.seq = shown.fired;
    p.start_still = true;
    let running = shown.transition != MACHINE_NONE;
    let playing = machine_state_def(m.state_offset + min(select(shown.current, shown.destination, running), last));
    p.clip = playing.clip;
    p.tree_offset = playing.tree_offset;
    p.tree_nodes = playing.tree_nodes;
    p.rate = machine_state_rate(playing, params);
    p.loop_mode = select(LOOP_ONCE, LOOP_FOREVER, (playing.flags & MACHINE_STATE_LOOPS) != 0u);
    p.loop_count = 1u;
    p.params = tree_parameters(playing, params);
    p.source_params = p.params;
    var start = ticks_to_f32(select(ticks_get(shown.time), ticks_get(shown.destination_time), running));
    if (playing.tree_nodes == 0u) {
        start *= clip_duration(playing.clip);
    }
    p.start_time = start;
    if (running) {
        let t = machine_transition(m.transition_offset + shown.transition);
        let smooth_curve = select(0u, TRANSITION_SMOOTH, (t.flags & MACHINE_TRANSITION_SMOOTH) != 0u);
        p.transition_duration = shown.duration;
        if ((t.flags & MACHINE_TRANSITION_INERTIALIZE) != 0u) {
            p.flags |= SOURCE_OFFSET;
        } else if ((shown.flags & MACHINE_FROM_POSE) != 0u) {
            p.flags |= SOURCE_SNAPSHOT | smooth_curve;
        } else {
            let source = machine_state_def(m.state_offset + min(shown.current, last));
            p.flags |= select(SOURCE_CLIP, SOURCE_TREE, source.tree_nodes > 0u) | smooth_curve;
            p.source_clip = source.clip;
            p.source_tree_offset = source.tree_offset;
            p.source_tree_nodes = source.tree_nodes;
            p.source_rate = machine_state_rate(source, params);
            p.source_loop_mode = select(LOOP_ONCE, LOOP_FOREVER, (source.flags & MACHINE_STATE_LOOPS) != 0u);
            p.source_loop_count = 1u;
            p.source_params = tree_parameters(source, params);
        }
    }
    if (mf.fired && !cut) {
        let fired = machine_transition(m.transition_offset + mf.transition);
        if ((fired.flags & MACHINE_TRANSITION_INERTIALIZE) != 0u) {
            p.flags |= KEEP_POSE | KEEP_VELOCITY;
        } else if ((mf.after.flags & MACHINE_FROM_POSE) != 0u) {
            p.flags |= KEEP_POSE;
        }
    }
    return p;
}
