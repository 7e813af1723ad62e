// Root motion of the clock stage: the displacements of a frame's clips blended, and the
// character's world moved by them. CPU mirror: cpu::root_motion.

#define_import_path wgpu_anim::root_motion

#import wgpu_anim::types::{ClipInfo, NO_ROOT_MOTION, Output}
#import wgpu_anim::math::{affine_from_sqt, affine_mul, quat_conjugate, quat_mul, quat_rotate}
#import wgpu_anim::bindings::instances
#import wgpu_anim::library::{clip_info, sample_track, track_at}
#ifdef RETARGET
#import wgpu_anim::library::retarget_head
#endif

// A rigid displacement: rotation q (a unit quaternion), then translation t. Rust:
// cpu::root_motion::Rigid.
struct Rigid {
    t: vec3<f32>,
    q: vec4<f32>,
}

fn rigid_identity() -> Rigid {
    return Rigid(vec3<f32>(0.0), vec4<f32>(0.0, 0.0, 0.0, 1.0));
}

// a * b: b in a's frame.
fn rigid_mul(a: Rigid, b: Rigid) -> Rigid {
    return Rigid(a.t + quat_rotate(a.q, b.t), quat_mul(a.q, b.q));
}

fn rigid_inverse(a: Rigid) -> Rigid {
    let q = quat_conjugate(a.q);
    return Rigid(-quat_rotate(q, a.t), q);
}

// a^k for any k, by squaring: a loop's displacement repeated k times (backward when k < 0).
fn rigid_pow(a: Rigid, k: i32) -> Rigid {
    var base = a;
    var n = bitcast<u32>(k);
    if (k < 0) {
        base = rigid_inverse(a);
        n = 0u - n;
    }
    var result = rigid_identity();
    while (n != 0u) {
        if ((n & 1u) != 0u) {
            result = rigid_mul(result, base);
        }
        n = n >> 1u;
        if (n != 0u) {
            base = rigid_mul(base, base);
        }
    }
    result.q = normalize(result.q);
    return result;
}

// The root motion track of a clip at `t` seconds: where the root stands relative to where it
// stood at 0.
fn root_at(info: ClipInfo, t: f32) -> Rigid {
    let translation = sample_track(track_at(info.root_track), t, false);
    let rotation = sample_track(track_at(info.root_track + 1u), t, true);
    return Rigid(translation.xyz, rotation);
}

// The displacement of a clip played from `t0` seconds in loop `loops0` to `t1` in `loops1`, in
// the character's frame at t0: G(t0)^-1 G(T)^(loops1 - loops0) G(t1), G(T) being one loop's.
fn root_displacement(info: ClipInfo, t0: f32, loops0: u32, t1: f32, loops1: u32) -> Rigid {
    let dl = bitcast<i32>(loops1 - loops0);
    var d = rigid_inverse(root_at(info, t0));
    if (dl != 0) {
        d = rigid_mul(d, rigid_pow(root_at(info, info.duration), dl));
    }
    return rigid_mul(d, root_at(info, t1));
}

// The weighted sum of a frame's displacements: translations, and rotations on the hemisphere of
// the identity (normalized at the end).
struct RootBlend {
    t: vec3<f32>,
    q: vec4<f32>,
}

// Adds clip `clip`'s displacement from (t0, loops0) to (t1, loops1), weighted by `w`: the
// identity for a clip without root motion.
fn add_root(blend: ptr<function, RootBlend>, clip: u32, t0: f32, loops0: u32, t1: f32, loops1: u32, w: f32) {
    let info = clip_info(clip);
    var d = rigid_identity();
    if (info.root_track != NO_ROOT_MOTION) {
        d = root_displacement(info, t0, loops0, t1, loops1);
    }
    var q = d.q;
    if (q.w < 0.0) {
        q = -q;
    }
    (*blend).t += d.t * w;
    (*blend).q += q * w;
}

// Moves character `i`'s world transform by the frame's blended displacement `blend`, then by its
// turn (`root_turn` for `dt`), and writes it to its instance, where the renderer and the socket
// matrices read it. A `world_seq` the GPU has not seen means the CPU set the world (a teleport, or
// root motion just turned on): taken first. A character played through a retarget (RETARGET)
// moves by the displacement times its height ratio.
fn move_root(i: u32, r: ptr<function, Output>, blend_in: RootBlend, dt: f32) {
    var blend = blend_in;
#ifdef RETARGET
    let head = retarget_head(instances[i].skeleton);
    if (head.x != 0u) {
        blend.t *= bitcast<f32>(head.w);
    }
#endif
    if ((*r).world_seq != instances[i].world_seq) {
        (*r).world = instances[i].world;
        (*r).world_seq = instances[i].world_seq;
    }
    var q = vec4<f32>(0.0, 0.0, 0.0, 1.0);
    let len = length(blend.q);
    if (len > 0.0) {
        q = blend.q / len;
    }
    let half_turn = 0.5 * instances[i].root_turn * dt;
    q = quat_mul(q, vec4<f32>(0.0, sin(half_turn), 0.0, cos(half_turn)));
    (*r).world = affine_mul((*r).world, affine_from_sqt(blend.t, q, vec3<f32>(1.0)));
    (*r).delta_translation = vec4<f32>(blend.t, 0.0);
    (*r).delta_rotation = q;
    instances[i].world = (*r).world;
}
