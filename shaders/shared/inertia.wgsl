// Inertialized transitions: the per-joint math the sample stage applies on top of the target's
// pose. Bollo (GDC 2018, "Inertialization: High-Performance Animation Transitions in Gears of
// War"): the offset from the target to the source decays to zero along a quintic. Holden ("Dead
// Blending", 2023): the source, extrapolated with its velocity decaying, cross-fades to the
// target. CPU mirror: cpu::inertia; f64 reference: reference::inertia.
//
// A pose difference (`PoseDelta`) holds per channel an xyz vector: translation, rotation, scale.
// A rotation difference a·b⁻¹ is kept as the vector part of that quaternion on its shorter arc
// (sin(θ/2) times the axis): a chart of the rotations without trigonometry, which a device may
// compute to 2⁻¹¹ only, and monotonic in the angle, so a decay to zero never turns past it.

#define_import_path wgpu_anim::inertia

#import wgpu_anim::types::LocalPose
#import wgpu_anim::math::{quat_conjugate, quat_mul}

// An offset below this (times 1 + |v0| duration) counts as none (decay_vector). Rust:
// cpu::inertia::DECAY_NEGLIGIBLE.
const DECAY_NEGLIGIBLE: f32 = 1e-5;

// Per channel: translation, rotation (vector part of a shorter-arc quaternion), scale.
struct PoseDelta {
    t: vec3<f32>,
    r: vec3<f32>,
    s: vec3<f32>,
}

// The rotation of chart vector v (|v| at most 1; longer ones are a half turn along v).
fn chart_rotation(v: vec3<f32>) -> vec4<f32> {
    let n2 = dot(v, v);
    if (n2 > 1.0) {
        return vec4<f32>(v * inverseSqrt(n2), 0.0);
    }
    return vec4<f32>(v, sqrt(1.0 - n2));
}

// The chart vector of unit quaternion q, on the shorter arc.
fn rotation_chart(q: vec4<f32>) -> vec3<f32> {
    return select(q.xyz, -q.xyz, q.w < 0.0);
}

// a ⊖ b: what takes pose b to pose a.
fn pose_sub(a: LocalPose, b: LocalPose) -> PoseDelta {
    return PoseDelta(
        a.translation.xyz - b.translation.xyz,
        rotation_chart(quat_mul(a.rotation, quat_conjugate(b.rotation))),
        a.scale.xyz - b.scale.xyz,
    );
}

// b ⊕ d: pose b moved by d.
fn pose_add(b: LocalPose, d: PoseDelta) -> LocalPose {
    return LocalPose(
        vec4<f32>(b.translation.xyz + d.t, 0.0),
        normalize(quat_mul(chart_rotation(d.r), b.rotation)),
        vec4<f32>(b.scale.xyz + d.s, 0.0),
    );
}

fn delta_scaled(d: PoseDelta, k: f32) -> PoseDelta {
    return PoseDelta(d.t * k, d.r * k, d.s * k);
}

// A delta kept in a LocalPose slot of the local pose buffer (w components 0).
fn delta_from_slot(p: LocalPose) -> PoseDelta {
    return PoseDelta(p.translation.xyz, p.rotation.xyz, p.scale.xyz);
}

fn delta_to_slot(d: PoseDelta) -> LocalPose {
    return LocalPose(vec4<f32>(d.t, 0.0), vec4<f32>(d.r, 0.0), vec4<f32>(d.s, 0.0));
}

// Bollo's quintic: x(t) from x0 ≥ 0 with velocity v0 to 0 at t1, x' and x'' 0 there. Where v0
// heads to 0 so fast that the curve would pass it, t1 shortens to -5 x0 / v0; the starting
// acceleration a0 = (-8 v0 t1 - 20 x0) / t1² is kept at 0 or above. Written in s = t / t1 (a
// short t1 divides nothing small) and factored as (1 - s)³ q(s), exactly 0 at the end and
// without the cancellation of its expanded form there.
fn bollo_quintic(x0: f32, v0: f32, t: f32, duration: f32) -> f32 {
    var t1 = duration;
    if (v0 < 0.0) {
        t1 = min(t1, -5.0 * x0 / v0);
    }
    if (!(t < t1) || !(x0 > 0.0)) {
        return 0.0;
    }
    let s = max(t, 0.0) / t1;
    let v = v0 * t1;
    let a = max(-8.0 * v - 20.0 * x0, 0.0);
    let u = 1.0 - s;
    return u * u * u * (x0 + s * (v + 3.0 * x0 + s * 0.5 * (a + 6.0 * v + 12.0 * x0)));
}

// An offset vector x0 with velocity v0 after t of a decay of `duration`: Bollo's quintic along
// x0's direction with v0's part along it; v0's part across it leaves and returns along
// t (1 - t/duration)⁴ (value, slope and curvature 0 at the end, no crossing), so that the
// offset's velocity starts at v0 whole. An offset within DECAY_NEGLIGIBLE (1 + |v0| duration)
// has no direction a device's rounding would keep (a pose equal to the target's up to the last
// bits): it counts as 0, and all of v0 leaves and returns.
fn decay_vector(x0: vec3<f32>, v0: vec3<f32>, t: f32, duration: f32) -> vec3<f32> {
    if (!(t < duration)) {
        return vec3<f32>(0.0);
    }
    let len = length(x0);
    var dir = vec3<f32>(0.0);
    if (len > DECAY_NEGLIGIBLE * (1.0 + length(v0) * duration)) {
        dir = x0 / len;
    }
    let along = dot(v0, dir);
    let u = 1.0 - max(t, 0.0) / duration;
    let u2 = u * u;
    return dir * bollo_quintic(len, along, t, duration) + (v0 - dir * along) * (max(t, 0.0) * u2 * u2);
}

// The offset t seconds into a decay of `duration` that started at x0 with velocity v0.
fn decay_offset(x0: PoseDelta, v0: PoseDelta, t: f32, duration: f32) -> PoseDelta {
    return PoseDelta(
        decay_vector(x0.t, v0.t, t, duration),
        decay_vector(x0.r, v0.r, t, duration),
        decay_vector(x0.s, v0.s, t, duration),
    );
}

// Pose p moved on by velocity v (per second, as pose_sub's differences) for `by` seconds.
fn pose_advance(p: LocalPose, v: PoseDelta, by: f32) -> LocalPose {
    return pose_add(p, delta_scaled(v, by));
}

// The velocity from pose `prev` to pose `now` over dt seconds (0 when dt is not positive).
fn pose_velocity(now: LocalPose, prev: LocalPose, dt: f32) -> PoseDelta {
    if (!(dt > 0.0)) {
        return PoseDelta(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    }
    return delta_scaled(pose_sub(now, prev), 1.0 / dt);
}

// Dead blending's source, t seconds on: moved by its velocity, which halves every `halflife`
// seconds (the distance travelled tends to v · halflife / ln 2; none with no half-life).
fn dead_extrapolate(source: LocalPose, v: PoseDelta, t: f32, halflife: f32) -> LocalPose {
    var by = 0.0;
    if (halflife > 0.0) {
        let k = 0.69314718 / halflife;
        by = (1.0 - exp(-k * max(t, 0.0))) / k;
    }
    return pose_advance(source, v, by);
}

// Dead blending's weight of the target t seconds into `duration`: smoothstep, whose slope is 0
// at both ends (the velocity does not jump).
fn dead_weight(t: f32, duration: f32) -> f32 {
    if (!(duration > 0.0)) {
        return 1.0;
    }
    let u = clamp(t / duration, 0.0, 1.0);
    return u * u * (3.0 - 2.0 * u);
}

// a and b mixed by w (w = 1: b), the rotation along the shorter arc, normalized.
fn pose_mix(a: LocalPose, b: LocalPose, w: f32) -> LocalPose {
    var qb = b.rotation;
    if (dot(a.rotation, qb) < 0.0) {
        qb = -qb;
    }
    return LocalPose(
        mix(a.translation, b.translation, w),
        normalize(mix(a.rotation, qb, w)),
        mix(a.scale, b.scale, w),
    );
}

// Dead blending's output t seconds in: the extrapolated source mixed into the target's pose
// `goal`.
fn dead_blend(source: LocalPose, v: PoseDelta, goal: LocalPose, t: f32, duration: f32, halflife: f32) -> LocalPose {
    let w = dead_weight(t, duration);
    if (w >= 1.0) {
        return goal;
    }
    return pose_mix(dead_extrapolate(source, v, t, halflife), goal, w);
}
