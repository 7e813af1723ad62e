// What a page keeps per character, in one storage buffer of sections (Rust:
// shaders::Resource::CharacterState and the resources whose home it is, layout::sections): the
// clocks (`Clock`, 4 units of 16 bytes each) from unit 0, the outputs (`Output`, 8 units each)
// from `frame.output_base`, the blend lists (`BlendList`, 20 units each) from
// `blend_lists_base()`, the morph weights (`f32`) from `morph_weights_base()` (the sections'
// bases, generated in `wgpu_anim::bindings` from shaders::Resource::sections). One binding for
// all leaves storage slots free in every stage. The CPU mirror takes the sections as slices
// (`clocks`, `outputs`, blend lists, morph weights): the same bytes.

#define_import_path wgpu_anim::state

#import wgpu_anim::types::{
    Affine, BlendList, BlendSample, Clock, LayerApply, MAX_BLEND_CLIPS, MAX_CURVES, MAX_LAYERS, Output, Ticks,
}
#import wgpu_anim::bindings::{blend_lists_base, character_state, frame, morph_weights_base}

// A clock's 16-byte units a character uses this frame (`CLOCK_UNIT_*`): its target's time (unit
// 0, always); the source's time and the layers' seq (1); the transition's time and layer 0's (2);
// layers 1 and 2's (3). The clock stage reads and writes only those; the others keep their bytes.
const CLOCK_UNIT_SOURCE: u32 = 2u;
const CLOCK_UNIT_TRANSITION: u32 = 4u;
const CLOCK_UNIT_LAYERS: u32 = 8u;

// Unit 0 of character i's clock: its target's time, loops and seq (the rest zero).
fn load_clock_target(i: u32) -> Clock {
    var c: Clock;
    let u0 = character_state[4u * i];
    c.time = Ticks(u0.x, u0.y);
    c.loops = u0.z;
    c.seq = u0.w;
    return c;
}

// Loads into `c` the units of character i's clock in `units` (besides unit 0).
fn load_clock_units(i: u32, units: u32, c: ptr<function, Clock>) {
    let b = 4u * i;
    if ((units & CLOCK_UNIT_SOURCE) != 0u) {
        let u1 = character_state[b + 1u];
        (*c).source_time = Ticks(u1.x, u1.y);
        (*c).source_loops = u1.z;
        (*c).layer_seq = u1.w;
    }
    if ((units & CLOCK_UNIT_TRANSITION) != 0u) {
        let u2 = character_state[b + 2u];
        (*c).transition_time = Ticks(u2.x, u2.y);
        (*c).layer_time[0] = Ticks(u2.z, u2.w);
    }
    if ((units & CLOCK_UNIT_LAYERS) != 0u) {
        let u3 = character_state[b + 3u];
        (*c).layer_time[1] = Ticks(u3.x, u3.y);
        (*c).layer_time[2] = Ticks(u3.z, u3.w);
    }
}

// Stores unit 0 and the units in `units` of character i's clock.
fn store_clock(i: u32, c: Clock, units: u32) {
    let b = 4u * i;
    character_state[b] = vec4<u32>(c.time.lo, c.time.hi, c.loops, c.seq);
    if ((units & CLOCK_UNIT_SOURCE) != 0u) {
        character_state[b + 1u] = vec4<u32>(c.source_time.lo, c.source_time.hi, c.source_loops, c.layer_seq);
    }
    if ((units & CLOCK_UNIT_TRANSITION) != 0u) {
        character_state[b + 2u] = vec4<u32>(c.transition_time.lo, c.transition_time.hi, c.layer_time[0].lo, c.layer_time[0].hi);
    }
    if ((units & CLOCK_UNIT_LAYERS) != 0u) {
        character_state[b + 3u] = vec4<u32>(c.layer_time[1].lo, c.layer_time[1].hi, c.layer_time[2].lo, c.layer_time[2].hi);
    }
}

fn load_output(i: u32) -> Output {
    let b = frame.output_base + 8u * i;
    let seq = character_state[b + 3u];
    let c0 = bitcast<vec4<f32>>(character_state[b + 6u]);
    let c1 = bitcast<vec4<f32>>(character_state[b + 7u]);
    return Output(
        Affine(
            bitcast<vec4<f32>>(character_state[b]),
            bitcast<vec4<f32>>(character_state[b + 1u]),
            bitcast<vec4<f32>>(character_state[b + 2u]),
        ),
        seq.x, seq.y, seq.z, seq.w,
        bitcast<vec4<f32>>(character_state[b + 4u]),
        bitcast<vec4<f32>>(character_state[b + 5u]),
        array<f32, MAX_CURVES>(c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w),
    );
}

// Writes the IK stage's `ik_reached` word of character i's output alone, when it changes (a
// character without goals costs a read, not a write, per frame).
fn store_ik_reached(i: u32, bits: u32) {
    let b = frame.output_base + 8u * i + 3u;
    if (character_state[b].y != bits) {
        character_state[b].y = bits;
    }
}

fn store_output(i: u32, o: Output) {
    let b = frame.output_base + 8u * i;
    character_state[b] = bitcast<vec4<u32>>(o.world.x);
    character_state[b + 1u] = bitcast<vec4<u32>>(o.world.y);
    character_state[b + 2u] = bitcast<vec4<u32>>(o.world.z);
    character_state[b + 3u] = vec4<u32>(o.world_seq, o.ik_reached, o.evaluate, o.pad);
    character_state[b + 4u] = bitcast<vec4<u32>>(o.delta_translation);
    character_state[b + 5u] = bitcast<vec4<u32>>(o.delta_rotation);
    character_state[b + 6u] = bitcast<vec4<u32>>(vec4<f32>(o.curves[0], o.curves[1], o.curves[2], o.curves[3]));
    character_state[b + 7u] = bitcast<vec4<u32>>(vec4<f32>(o.curves[4], o.curves[5], o.curves[6], o.curves[7]));
}

// 16-byte units of a `BlendList`: its head (count, mesh_additive, inertia, inertia_time), a unit
// per layer, a unit per sample (Rust: layout::BLEND_LIST_UNITS).
const BLEND_LIST_UNITS: u32 = 20u;
const_assert BLEND_LIST_UNITS == 1u + MAX_LAYERS + MAX_BLEND_CLIPS;

// Unit `u` of character i's blend list.
fn blend_list_unit(i: u32, u: u32) -> vec4<u32> {
    return character_state[blend_lists_base() + BLEND_LIST_UNITS * i + u];
}

fn blend_list_layer(i: u32, k: u32) -> LayerApply {
    let u = blend_list_unit(i, 1u + k);
    return LayerApply(u.x, bitcast<f32>(u.y), u.z, bitcast<f32>(u.w));
}

fn blend_list_sample(i: u32, k: u32) -> BlendSample {
    let u = blend_list_unit(i, 1u + MAX_LAYERS + k);
    return BlendSample(u.x, bitcast<f32>(u.y), bitcast<f32>(u.z), u.w);
}

// Writes character i's blend list: its head, its layers (read only by an animator with layers:
// left out with NO_LAYERS) and its first `count` samples, all that the sample stage reads. The
// samples past `count` keep what an earlier frame wrote (Rust: gpu::Animator::read_blend_lists
// reads them as zero, as the CPU mirror writes them).
fn store_blend_list(i: u32, value: BlendList) {
    var list = value;
    let b = blend_lists_base() + BLEND_LIST_UNITS * i;
    character_state[b] = vec4<u32>(list.count, list.mesh_additive, list.inertia, bitcast<u32>(list.inertia_time));
#ifndef NO_LAYERS
    for (var k = 0u; k < MAX_LAYERS; k++) {
        let l = list.layers[k];
        character_state[b + 1u + k] = vec4<u32>(l.mode, bitcast<u32>(l.weight), l.mask, bitcast<u32>(l.previous_weight));
    }
#endif
    for (var k = 0u; k < min(list.count, MAX_BLEND_CLIPS); k++) {
        let s = list.samples[k];
        character_state[b + 1u + MAX_LAYERS + k] = vec4<u32>(s.clip, bitcast<u32>(s.time), bitcast<u32>(s.weight), s.layer);
    }
}

// Morph weight `w` of the page (its drawn weights from 0, the instances' own from
// `frame.morph_api_base`, the snapshots from twice that).
fn load_morph_weight(w: u32) -> f32 {
    let k = 4u * morph_weights_base() + w;
    return bitcast<f32>(character_state[k >> 2u][k & 3u]);
}

fn store_morph_weight(w: u32, value: f32) {
    let k = 4u * morph_weights_base() + w;
    character_state[k >> 2u][k & 3u] = bitcast<u32>(value);
}
