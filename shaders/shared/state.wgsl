// What the clock stage keeps and gives back per character, in one storage buffer of sections
// (Rust: shaders::Resource::CharacterState, gpu page buffers): the clocks (`Clock`, 4 units of
// 16 bytes each) from unit 0, then the outputs (`Output`, 8 units each) from
// `frame.output_base`. One binding for both leaves a storage slot free in every stage. The CPU
// mirror takes the two sections as slices (`clocks`, `outputs`): the same bytes.

#define_import_path wgpu_anim::state

#import wgpu_anim::types::{Affine, Clock, MAX_CURVES, Output, Ticks}
#import wgpu_anim::bindings::{character_state, frame}

fn load_clock(i: u32) -> Clock {
    let b = 4u * i;
    let u0 = character_state[b];
    let u1 = character_state[b + 1u];
    let u2 = character_state[b + 2u];
    let u3 = character_state[b + 3u];
    return Clock(
        Ticks(u0.x, u0.y), u0.z, u0.w,
        Ticks(u1.x, u1.y), u1.z, u1.w,
        Ticks(u2.x, u2.y),
        array<Ticks, 3>(Ticks(u2.z, u2.w), Ticks(u3.x, u3.y), Ticks(u3.z, u3.w)),
    );
}

fn store_clock(i: u32, c: Clock) {
    let b = 4u * i;
    character_state[b] = vec4<u32>(c.time.lo, c.time.hi, c.loops, c.seq);
    character_state[b + 1u] = vec4<u32>(c.source_time.lo, c.source_time.hi, c.source_loops, c.layer_seq);
    character_state[b + 2u] = vec4<u32>(c.transition_time.lo, c.transition_time.hi, c.layer_time[0].lo, c.layer_time[0].hi);
    character_state[b + 3u] = vec4<u32>(c.layer_time[1].lo, c.layer_time[1].hi, c.layer_time[2].lo, c.layer_time[2].hi);
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
