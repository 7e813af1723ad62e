// Stage 1: per instance, advance its clocks (Game Engine Architecture 11.4.2), evaluate its blend
// tree and transition, and write the list of weighted clip samples the `sample` stage blends.
// One thread per instance. CPU mirror: cpu::clock. Its tick arithmetic, looping, clip events, root
// motion and float curves are the modules shared/ticks, looping, events, root_motion and curves.

#define_import_path wgpu_anim::clock

#import wgpu_anim::types::{
    BlendList, BlendSample, FRAME_CULL, FRAME_CURVES, FRAME_EVENTS, INERTIA_DEAD_BLEND, INERTIA_OFFSET,
    INERTIA_KEEP_POSE, INERTIA_LAST_POSE, INERTIA_PREVIOUS, INERTIA_SWITCH, INERTIA_VELOCITY, KEEP_POSE, KEEP_VELOCITY,
    VELOCITY_FROM_LAST_POSE, LAYER_ADDITIVE_MESH, LAYER_ON, LayerApply, MACHINE, MAX_BLEND_CLIPS, MAX_LAYERS, PREVIOUS_TAG, ROOT_MOTION,
    SNAPSHOT_CLIP, SOURCE_CLIP, SOURCE_NONE, SOURCE_OFFSET, SOURCE_SNAPSHOT, SOURCE_TREE, TICK_BITS, TRANSITION_DEAD_BLEND, TRANSITION_FROZEN,
    TRANSITION_SMOOTH, Ticks, WORKGROUP_SIZE,
}
#import wgpu_anim::math::workgroup_linear
#import wgpu_anim::culling::mark_evaluation
#import wgpu_anim::bindings::{frame, instances, layer_defs}
#import wgpu_anim::state::{
    CLOCK_UNIT_LAYERS, CLOCK_UNIT_SOURCE, CLOCK_UNIT_TRANSITION, load_clock_target, load_clock_units, load_output,
    store_blend_list, store_clock, store_output,
}
#import wgpu_anim::library::clip_duration
#import wgpu_anim::blend_weights::tree_leaves
#import wgpu_anim::machine::{Playback, load_parameters, machine_playback, machine_step}
#import wgpu_anim::ticks::{
    i64_add, i64_clamp, period_ticks, ratio_ticks, tick_limit, ticks_from_f32, ticks_get, ticks_of,
    ticks_to_f32, u64_shl,
}
#import wgpu_anim::looping::{ClipTime, advance_clip_time, frame_start_time}
#import wgpu_anim::events::{EventSource, fire_events}
#import wgpu_anim::root_motion::{RootBlend, add_root, move_root}
#import wgpu_anim::curves::blend_curves

// Inserts a sample of layer `layer` (0: the base), keeping the list sorted heaviest first;
// beyond MAX_BLEND_CLIPS the lightest is dropped. Equal (clip, time, layer) samples merge.
fn add_sample(list: ptr<function, BlendList>, clip: u32, time: f32, weight: f32, layer: u32) {
    if (!(weight > 0.0)) {
        return;
    }
    for (var k = 0u; k < (*list).count; k++) {
        if ((*list).samples[k].clip == clip && (*list).samples[k].time == time && (*list).samples[k].layer == layer) {
            (*list).samples[k].weight += weight;
            // Restore the order: bubble the grown entry up.
            var m = k;
            while (m > 0u && (*list).samples[m - 1u].weight < (*list).samples[m].weight) {
                let tmp = (*list).samples[m - 1u];
                (*list).samples[m - 1u] = (*list).samples[m];
                (*list).samples[m] = tmp;
                m -= 1u;
            }
            return;
        }
    }
    var n = (*list).count;
    if (n == MAX_BLEND_CLIPS) {
        if ((*list).samples[n - 1u].weight >= weight) {
            return;
        }
        n -= 1u;
    }
    var m = n;
    while (m > 0u && (*list).samples[m - 1u].weight < weight) {
        (*list).samples[m] = (*list).samples[m - 1u];
        m -= 1u;
    }
    (*list).samples[m] = BlendSample(clip, time, weight, layer);
    (*list).count = n + 1u;
}

// Advances one state — a clip, or a blend tree with phase-synchronized children — and adds its
// samples, scaled by `scale`, to the list (with `previous` above 0 also its samples where it stood
// before the step, scaled by `previous`, in layer `layer` + PREVIOUS_TAG); fires the events its
// clips crossed when the frame detects events. A state that started this frame steps from its start wrapped or clamped by its
// loop mode (frame_start_time). Returns the state's new clock.
fn play_state(
    list: ptr<function, BlendList>,
    clip: u32,
    tree_offset: u32,
    tree_nodes: u32,
    params: vec4<f32>,
    rate: f32,
    loop_mode: u32,
    loop_count: u32,
    time: Ticks,
    loops: u32,
    dt: f32,
    scale: f32,
    previous: f32,
    layer: u32,
    events: EventSource,
    root: ptr<function, RootBlend>,
) -> ClipTime {
    let fire = (frame.flags & FRAME_EVENTS) != 0u;
    if (tree_nodes == 0u) {
        let duration = clip_duration(clip);
        let delta = ratio_ticks(rate, dt, 1.0);
        let period = period_ticks(duration);
        let start = frame_start_time(time, loops, events.started != 0u, loop_mode, loop_count, duration, period);
        let ct = advance_clip_time(start.time, start.loops, delta, loop_mode, loop_count, duration, period);
        add_sample(list, clip, ct.sample_time, scale, layer);
        if (previous > 0.0) {
            let before = advance_clip_time(start.time, start.loops, vec2<u32>(0u, 0u), loop_mode, loop_count, duration, period);
            add_sample(list, clip, before.sample_time, previous, layer + PREVIOUS_TAG);
        }
        if (fire) {
            fire_events(events, clip, scale * events.weight, start.time, start.loops, ct, delta, period, loop_mode, loop_count, false);
        }
#ifdef ROOT_MOTION
        if (events.root != 0u) {
            let t0 = clamp(ticks_to_f32(ticks_get(start.time)), 0.0, duration);
            add_root(root, clip, t0, start.loops, ct.sample_time, ct.loops, scale);
        }
#endif
        return ct;
    }
    let cycle = u64_shl(vec2<u32>(1u, 0u), TICK_BITS);
    let start = frame_start_time(time, loops, events.started != 0u, loop_mode, loop_count, 1.0, cycle);
    let leaves = tree_leaves(tree_offset, tree_nodes, params);
    var total = 0.0;
    var synced = 0.0;
    for (var m = 0u; m < leaves.count; m++) {
        total += leaves.weights[m];
        synced += leaves.weights[m] * clip_duration(leaves.clips[m]);
    }
    if (!(total > 0.0)) {
        return ClipTime(start.time, start.loops, 0.0, 0.0);
    }
    // D = sum w_i T_i (weights normalized): every child advances its phase by rate * dt / D.
    let duration = synced / total;
    let delta = ratio_ticks(rate, dt, duration);
    let ct = advance_clip_time(start.time, start.loops, delta, loop_mode, loop_count, 1.0, cycle);
    let phase0 = clamp(ticks_to_f32(ticks_get(start.time)), 0.0, 1.0);
    let before = advance_clip_time(start.time, start.loops, vec2<u32>(0u, 0u), loop_mode, loop_count, 1.0, cycle);
    for (var m = 0u; m < leaves.count; m++) {
        let leaf_duration = clip_duration(leaves.clips[m]);
        add_sample(list, leaves.clips[m], ct.phase * leaf_duration, scale * leaves.weights[m], layer);
        if (previous > 0.0) {
            add_sample(list, leaves.clips[m], before.phase * leaf_duration, previous * leaves.weights[m], layer + PREVIOUS_TAG);
        }
        if (fire) {
            fire_events(events, leaves.clips[m], scale * leaves.weights[m] * events.weight, start.time, start.loops, ct, delta, cycle, loop_mode, loop_count, true);
        }
#ifdef ROOT_MOTION
        if (events.root != 0u) {
            add_root(root, leaves.clips[m], phase0 * leaf_duration, start.loops, ct.phase * leaf_duration, ct.loops, scale * leaves.weights[m]);
        }
#endif
    }
    return ct;
}

// Transition weight of the target after `elapsed` seconds of `duration`.
fn transition_weight(elapsed: f32, duration: f32, smooth_curve: bool) -> f32 {
    if (!(duration > 0.0)) {
        return 1.0;
    }
    let u = clamp(elapsed / duration, 0.0, 1.0);
    if (smooth_curve) {
        return u * u * (3.0 - 2.0 * u);
    }
    return u;
}

// What instance `i` plays by its own fields (Rust: cpu::clock::Playback::of_instance).
fn instance_playback(i: u32, flags: u32) -> Playback {
    var p: Playback;
    p.flags = flags;
    p.seq = instances[i].seq;
    p.start_time = instances[i].start_time;
    p.transition_duration = instances[i].transition_duration;
    p.params = instances[i].params;
    p.source_params = p.params;
    p.clip = instances[i].clip;
    p.tree_offset = instances[i].tree_offset;
    p.tree_nodes = instances[i].tree_nodes;
    p.rate = instances[i].rate;
    p.loop_mode = instances[i].loop_mode;
    p.loop_count = instances[i].loop_count;
    let kind = flags & 15u;
    if (kind == SOURCE_CLIP || kind == SOURCE_TREE) {
        p.source_clip = instances[i].source_clip;
        p.source_tree_offset = instances[i].source_tree_offset;
        p.source_tree_nodes = instances[i].source_tree_nodes;
        p.source_rate = instances[i].source_rate;
        p.source_loop_mode = instances[i].source_loop_mode;
        p.source_loop_count = instances[i].source_loop_count;
    }
    p.start_still = false;
    return p;
}

// Instance `i`'s frame: advances its clock and writes its blend list. The instance is read
// section by section: its first 64 bytes, the transition's 32 while one is set, and the layer
// section while a layer is on (see layout::GpuInstance). A character with a state machine
// (MACHINE) plays what the machine's rules decide this frame instead of its own fields.
fn advance_instance(i: u32, dt: f32, list: ptr<function, BlendList>) {
    let instance_flags = instances[i].flags;
    var p: Playback;
#ifdef MACHINES
    if ((instance_flags & MACHINE) != 0u) {
        let params = load_parameters(i);
        p = machine_playback(machine_step(i, dt, params), params, instance_flags);
    } else {
        p = instance_playback(i, instance_flags);
    }
#else
    p = instance_playback(i, instance_flags);
#endif
    let flags = p.flags;
    var c = load_clock_target(i);
    let kind = flags & 15u;
#ifdef MACHINES
    // The sample stage reads a transition's length from the instance: a machine's, written here.
    if ((instance_flags & MACHINE) != 0u && kind != SOURCE_NONE) {
        instances[i].transition_duration = p.transition_duration;
    }
#endif
    let target_started = p.seq != c.seq;
    // The clock's other units, only where this frame may change them: the source's and the
    // transition's when a state starts or a transition runs, the layers' seq and times while
    // layers are on. Elsewhere they keep their bytes untouched.
    let layers_on = flags & (LAYER_ON * ((1u << MAX_LAYERS) - 1u));
    let switched = target_started || kind != SOURCE_NONE;
    let units = select(0u, CLOCK_UNIT_SOURCE, switched || layers_on != 0u)
        | select(0u, CLOCK_UNIT_TRANSITION, switched || (layers_on & LAYER_ON) != 0u)
        | select(0u, CLOCK_UNIT_LAYERS, (layers_on & ~LAYER_ON) != 0u);
    load_clock_units(i, units, &c);
    let root_motion = (flags & ROOT_MOTION) != 0u;
    var root = RootBlend(vec3<f32>(0.0), vec4<f32>(0.0));
    if (target_started) {
        // A new target state: the running clock becomes the source's, the target restarts.
        c.source_time = c.time;
        c.source_loops = c.loops;
        c.transition_time = Ticks(0u, 0u);
        c.time = ticks_of(ticks_from_f32(p.start_time));
        c.loops = 0u;
        c.seq = p.seq;
    }
    // Layers (re)started since the last frame have a seq newer than the one the clock saw.
    let seen_layer_seq = c.layer_seq;
    if (layers_on != 0u) {
        c.layer_seq = instances[i].layer_seq;
    }
    // An inertialized transition evaluates its target alone; the frame before one (unless the
    // pose the frame before showed stands for it: VELOCITY_FROM_LAST_POSE), and its first frame
    // when it decays an offset, also sample where each state stood a frame ago.
    let inertial = kind == SOURCE_OFFSET;
    let dead_blend = (flags & TRANSITION_DEAD_BLEND) != 0u;
    let keep_velocity = (flags & KEEP_VELOCITY) != 0u;
    let last_pose = keep_velocity && (flags & VELOCITY_FROM_LAST_POSE) != 0u;
    let switching = inertial && target_started && !dead_blend;
    let previous = (keep_velocity && !last_pose) || switching;
    (*list).inertia = select(0u, select(INERTIA_OFFSET, INERTIA_DEAD_BLEND, dead_blend), inertial)
        | select(0u, INERTIA_SWITCH, switching)
        | select(0u, INERTIA_VELOCITY, keep_velocity)
        | select(0u, INERTIA_PREVIOUS, previous)
        | select(0u, INERTIA_LAST_POSE, last_pose)
        | select(0u, INERTIA_KEEP_POSE, (flags & KEEP_POSE) != 0u);
    var beta = 1.0;
    var beta_previous = 1.0;
    if (kind != SOURCE_NONE) {
        // Elapsed seconds, exact as every clock; from 0 up.
        let elapsed = i64_clamp(i64_add(ticks_get(c.transition_time), ticks_from_f32(dt)), vec2<u32>(0u, 0u), tick_limit());
        c.transition_time = ticks_of(elapsed);
        let seconds = ticks_to_f32(elapsed);
        (*list).inertia_time = seconds;
        if (!inertial) {
            let smooth_curve = (flags & TRANSITION_SMOOTH) != 0u;
            beta = transition_weight(seconds, p.transition_duration, smooth_curve);
            beta_previous = transition_weight(seconds - dt, p.transition_duration, smooth_curve);
        }
    }
    // s = 0: the target, 1: the source, 2 and on: the layers — one call of play_state for all,
    // so the blend-tree evaluator is compiled once. Without layers (NO_LAYERS,
    // shaders/sample.wgsl), the target and the source.
#ifdef NO_LAYERS
    let states = 2u;
#else
    let states = 2u + MAX_LAYERS;
#endif
    for (var s = 0u; s < states; s++) {
        var clip = p.clip;
        var tree_offset = p.tree_offset;
        var tree_nodes = p.tree_nodes;
        var rate = p.rate;
        var loop_mode = p.loop_mode;
        var loop_count = p.loop_count;
        var params = p.params;
        var time = c.time;
        var loops = c.loops;
        // A machine's target that starts this frame is where its clock put it.
        var state_dt = select(dt, 0.0, target_started && p.start_still);
        var scale = beta;
        var scale_previous = beta_previous;
        var layer_id = 0u;
        var events = EventSource(frame.first_instance + i, s, select(0u, 1u, target_started), 1.0, select(0u, 1u, root_motion && s < 2u));
        if (s == 1u) {
            events.started = 0u;
            if (kind == SOURCE_SNAPSHOT) {
                add_sample(list, SNAPSHOT_CLIP, 0.0, 1.0 - beta, 0u);
                if (previous) {
                    add_sample(list, SNAPSHOT_CLIP, 0.0, 1.0 - beta_previous, PREVIOUS_TAG);
                }
#ifdef ROOT_MOTION
                if (root_motion) {
                    // A held pose does not move: the identity, weighted.
                    root.q += vec4<f32>(0.0, 0.0, 0.0, 1.0 - beta);
                }
#endif
                continue;
            }
            // A cross-fade over by this frame still has its source sampled at the previous
            // frame's times when the frame needs them (with weight 0 now: nothing else of it).
            if (kind == SOURCE_NONE || inertial || !(beta < 1.0 || (previous && beta_previous < 1.0))) {
                continue;
            }
            clip = p.source_clip;
            tree_offset = p.source_tree_offset;
            tree_nodes = 0u;
            if (kind == SOURCE_TREE) {
                tree_nodes = p.source_tree_nodes;
            }
            rate = p.source_rate;
            loop_mode = p.source_loop_mode;
            loop_count = p.source_loop_count;
            params = p.source_params;
            time = c.source_time;
            loops = c.source_loops;
            state_dt = select(dt, 0.0, (flags & TRANSITION_FROZEN) != 0u);
            scale = 1.0 - beta;
            scale_previous = 1.0 - beta_previous;
        } else if (s >= 2u) {
            let k = s - 2u;
            if ((flags & (LAYER_ON << k)) == 0u) {
                continue;
            }
            let layer = instances[i].layers[k];
            let def = layer_defs[layer.def];
            // Layers read the instance's own parameters (a machine's trees read the machine's).
            params = p.params;
#ifdef MACHINES
            if ((instance_flags & MACHINE) != 0u) {
                params = instances[i].params;
            }
#endif
            events.started = 0u;
            if (bitcast<i32>(layer.seq - seen_layer_seq) > 0) {
                c.layer_time[k] = ticks_of(ticks_from_f32(layer.start_time));
                events.started = 1u;
            }
            // A snapshot source already shows the layers: fade them in with the new base
            // instead of adding them twice.
            var weight = layer.weight;
            var previous_weight = layer.weight;
            if (kind == SOURCE_SNAPSHOT) {
                weight *= beta;
                previous_weight *= beta_previous;
            }
            (*list).layers[k] = LayerApply(def.mode, weight, def.mask, previous_weight);
            if (def.mode == LAYER_ADDITIVE_MESH) {
                (*list).mesh_additive = 1u;
            }
            if (def.tree_nodes == 0u && def.time_parameter < 4u) {
                // The clip's time axis as a parameter: sampled where the parameter says.
                let t = clamp(params[def.time_parameter], 0.0, clip_duration(def.clip));
                c.layer_time[k] = ticks_of(ticks_from_f32(t));
                add_sample(list, def.clip, t, 1.0, k + 1u);
                if (previous) {
                    add_sample(list, def.clip, t, 1.0, k + 1u + PREVIOUS_TAG);
                }
                continue;
            }
            clip = def.clip;
            tree_offset = def.tree_offset;
            tree_nodes = def.tree_nodes;
            rate = layer.rate;
            loop_mode = def.loop_mode;
            loop_count = 1u;
            time = c.layer_time[k];
            loops = 0u;
            scale = 1.0;
            scale_previous = 1.0;
            layer_id = k + 1u;
            events.weight = weight;
        }
        let ct = play_state(list, clip, tree_offset, tree_nodes, params, rate, loop_mode, loop_count, time, loops, state_dt, scale, select(0.0, scale_previous, previous), layer_id, events, &root);
        if (s == 0u) {
            c.time = ct.time;
            c.loops = ct.loops;
        } else if (s == 1u) {
            c.source_time = ct.time;
            c.source_loops = ct.loops;
        } else {
            c.layer_time[s - 2u] = ct.time;
        }
    }
    store_clock(i, c, units);
    // What the character gives back, in a variant of the stage only when the library has it
    // (shaders::Variant): root motion, float curves.
#ifdef OUTPUTS
    let curves = (frame.flags & FRAME_CURVES) != 0u;
    if (root_motion || curves) {
        var out = load_output(i);
#ifdef ROOT_MOTION
        if (root_motion) {
            move_root(i, &out, root, dt);
        }
#endif
#ifdef CURVES
        if (curves) {
            out.curves = blend_curves(list);
        }
#endif
        store_output(i, out);
    }
#endif
}
@compute @workgroup_size(WORKGROUP_SIZE)
fn clock(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups) * WORKGROUP_SIZE + lid;
    if (i >= frame.instance_count) {
        return;
    }
    var list: BlendList;
    advance_instance(i, frame.dt, &list);
    store_blend_list(i, list);
    if ((frame.flags & FRAME_CULL) != 0u) {
        _ = mark_evaluation(i, list.inertia, list.count, list.samples[0]);
    }
}
