// Stage 4: skinning matrices K[j] = model[j] * inverse_bind[j] as 3x4 affine matrices, all
// instances' palettes in one buffer, each instance at its joint_offset (and, for an instance
// that skins with dual quaternions on a page that keeps them, K[j] as a dual quaternion and a
// stretch in the dual palettes, the same buffer's section from `dual_palettes_base()`, at the same
// offset); after them (from the
// frame's joint capacity, `frame.snapshot_offset`) each instance's MAX_SOCKETS socket matrices
// world * model[joint] * offset, when its skeleton has sockets. One workgroup per instance, its
// threads striding over the joints; with THREAD_PER_CHARACTER one per eight, a thread each
// (shared/math.wgsl). CPU mirror: cpu::palette.

#define_import_path wgpu_anim::palette

#import wgpu_anim::types::{
    Affine, DualQuat, FRAME_DUAL_QUATERNION, FRAME_LOD_INTERPOLATE, MARK_ENTERED, MARK_EVALUATE, MAX_SOCKETS,
}
#import wgpu_anim::math::{CHARACTER_THREADS, JOINT_STRIDE, affine_mul, dual_quat_from_affine, first_joint, workgroup_character}
#import wgpu_anim::culling::{
    drawn_count, drawn_instance, evaluated_count, evaluated_instance, held_fraction, marks_of, update_rate,
}
#import wgpu_anim::bindings::{dual_palettes_base, frame, instances, model_poses, palettes}
#import wgpu_anim::library::{inverse_bind, skeleton_info, socket_at}

// Whether the frame keeps dual quaternions (FRAME_DUAL_QUATERNION) and interpolates update-rate
// LOD (FRAME_LOD_INTERPOLATE): never in an animator that keeps no dual quaternions or does not
// interpolate, whose passes are compiled with NO_DUAL_QUATERNION and NO_LOD_INTERPOLATION and
// leave that code out (shaders/sample.wgsl says why).
fn frame_dual_quaternions() -> bool {
#ifdef NO_DUAL_QUATERNION
    return false;
#else
    return (frame.flags & FRAME_DUAL_QUATERNION) != 0u;
#endif
}

fn frame_interpolates() -> bool {
#ifdef NO_LOD_INTERPOLATION
    return false;
#else
    return (frame.flags & FRAME_LOD_INTERPOLATE) != 0u;
#endif
}

// The palette buffer holds 16-byte units (Rust: shaders::Resource::Palettes): palette slot `s`
// (an `Affine`) at unit 3 s, joint `j`'s dual quaternion (a `DualQuat`) at unit
// `dual_palettes_base() + 4 j`.
fn load_palette(s: u32) -> Affine {
    let b = 3u * s;
    return Affine(palettes[b], palettes[b + 1u], palettes[b + 2u]);
}

fn store_palette(s: u32, m: Affine) {
    let b = 3u * s;
    palettes[b] = m.x;
    palettes[b + 1u] = m.y;
    palettes[b + 2u] = m.z;
}

fn store_dual_palette(j: u32, q: DualQuat) {
    let b = dual_palettes_base() + 4u * j;
    palettes[b] = q.real;
    palettes[b + 1u] = q.dual;
    palettes[b + 2u] = q.stretch_diagonal;
    palettes[b + 3u] = q.stretch_off;
}

fn skin_matrix(model: Affine, inverse_bind: Affine) -> Affine {
    return affine_mul(model, inverse_bind);
}

virtual fn palette_model_at(joint_offset: u32, j: u32) -> Affine {
    // Joint `j`'s model matrix; the fused stage overrides it with workgroup memory.
    return model_poses[joint_offset + j];
}

// Update-rate LOD with interpolation (FRAME_LOD_INTERPOLATE): palette slot s's two key
// palettes, the last two evaluated, the older at the returned slot and the newer after it.
fn key_slot(s: u32) -> u32 {
    return frame.key_base + 2u * s;
}

// Instance `i`'s skinning matrices for joints first_joint(lid), then every JOINT_STRIDE-th below
// `joint_count` (shaders/shared/math.wgsl), and their dual quaternions when it skins with them. With FRAME_LOD_INTERPOLATE
// each becomes the newer key and the newer the older, and the palette drawn is the older (the
// pose shown an update period late; at rate 1 or on the frame it comes into view, the new
// matrix, both keys too).
fn palette_joints(i: u32, lid: u32, joint_count: u32) {
    let joint_offset = instances[i].joint_offset;
    let skel = skeleton_info(instances[i].skeleton);
    let dual = frame_dual_quaternions() && instances[i].dual_quaternion > 0.0;
    let keys = frame_interpolates();
    var fresh = true;
    if (keys) {
        let rate = update_rate(i, instances[i].world, instances[i].bound_radius);
        fresh = (marks_of(i) & MARK_ENTERED) != 0u || rate == 1u;
    }
    for (var j = first_joint(lid); j < joint_count; j += JOINT_STRIDE) {
        let k = skin_matrix(palette_model_at(joint_offset, j), inverse_bind(skel.joint_offset + j));
        var shown = k;
        if (keys) {
            let key = key_slot(joint_offset + j);
            if (!fresh) {
                shown = load_palette(key + 1u);
            }
            store_palette(key, shown);
            store_palette(key + 1u, k);
        }
        store_palette(joint_offset + j, shown);
#ifndef NO_DUAL_QUATERNION
        // Left out with the feature: an animator without dual quaternions keeps no room for them.
        if (dual) {
            store_dual_palette(joint_offset + j, dual_quat_from_affine(k));
        }
#endif
    }
}

// Each element of a + (b - a) s. Rust: cpu::palette::affine_lerp.
fn affine_lerp(a: Affine, b: Affine, s: f32) -> Affine {
    return Affine(mix(a.x, b.x, vec4<f32>(s)), mix(a.y, b.y, vec4<f32>(s)), mix(a.z, b.z, vec4<f32>(s)));
}

// A character drawn and not evaluated, with FRAME_LOD_INTERPOLATE: its palette between its two
// keys, as far as it stands between its evaluations (held_fraction).
fn interpolate_joints(i: u32, lid: u32, joint_count: u32) {
    let joint_offset = instances[i].joint_offset;
    let s = held_fraction(i);
    for (var j = first_joint(lid); j < joint_count; j += JOINT_STRIDE) {
        let key = key_slot(joint_offset + j);
        store_palette(joint_offset + j, affine_lerp(load_palette(key), load_palette(key + 1u), s));
    }
}

// Instance `i`'s socket matrices below its skeleton's socket count, socket s on thread s (with
// THREAD_PER_CHARACTER, all on the character's thread): the world matrix times the joint's model
// matrix times the socket's offset, at slot `frame.snapshot_offset + i * MAX_SOCKETS + s` of the
// palette buffer.
const_assert MAX_SOCKETS <= CHARACTER_THREADS;
fn socket_matrices(i: u32, lid: u32) {
    let skel = skeleton_info(instances[i].skeleton);
    for (var s = first_joint(lid); s < min(skel.socket_count, MAX_SOCKETS); s += JOINT_STRIDE) {
        let socket = socket_at(instances[i].skeleton * MAX_SOCKETS + s);
        let model = palette_model_at(instances[i].joint_offset, socket.joint);
        store_palette(frame.snapshot_offset + i * MAX_SOCKETS + s, affine_mul(instances[i].world, affine_mul(model, socket.offset)));
    }
}

@compute @workgroup_size(CHARACTER_THREADS)
fn palette(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // With culling, the k-th evaluated instance (shaders/shared/culling.wgsl); interpolating,
    // the k-th drawn one, evaluated or held.
    let k = workgroup_character(wg, groups, lid);
    let interpolating = frame_interpolates();
    var count = evaluated_count();
    if (interpolating) {
        count = drawn_count();
    }
    if (k >= count) {
        return;
    }
    var i = evaluated_instance(k);
    if (interpolating) {
        i = drawn_instance(k);
        if ((marks_of(i) & MARK_EVALUATE) == 0u) {
            interpolate_joints(i, lid, instances[i].joint_count);
            return;
        }
    }
    palette_joints(i, lid, instances[i].joint_count);
    socket_matrices(i, lid);
}
