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

#import wgpu_anim::types::{INERTIA_DEAD_BLEND, INERTIA_OFFSET, LocalPose}
#import wgpu_anim::math::{quat_conjugate, quat_mul}

// An offset below this (times 1 + |v0| duration) counts as none (decay_setup). Rust:
// layout::DECAY_NEGLIGIBLE.
const DECAY_NEGLIGIBLE: f32 = 1e-5;
// The shortest frame, seconds, a velocity is measured over (pose_velocity, and the offset's at
// the switch): a shorter one gives none rather than a division toward infinity. Rust:
// cpu::inertia::VELOCITY_MIN_DT.
const VELOCITY_MIN_DT: f32 = 1e-4;

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

// Bollo's quintic (x(t) from x0 ≥ 0 with velocity v0 to 0 at t1, x' and x'' 0 there; where v0
// heads to 0 so fast that the curve would pass it, t1 shortens to -5 x0 / v0; the starting
// acceleration a0 = (-8 v0 t1 - 20 x0) / t1² is kept at 0 or above) divided by x0, at s = t / t1
// (1 past the end), with r = v0 t1 / x0: factored as (1 - s)³ q(s), exactly 0 at the end and
// without the cancellation of its expanded form there.
fn bollo_unit(r: f32, s: f32) -> f32 {
    if (!(s < 1.0)) {
        return 0.0;
    }
    let u = 1.0 - s;
    let a = max(-8.0 * r - 20.0, 0.0);
    return u * u * u * (1.0 + s * (r + 3.0 + s * 0.5 * (a + 6.0 * r + 12.0)));
}

// A channel's decay, set up once when it starts from offset x0 with velocity v0 over `duration`,
// so that every later frame costs a few multiplications (decay_channel): Bollo's quintic along
// x0's direction with v0's part along it, and v0's part across it leaving and returning along
// t (1 - t/duration)⁴ (value, slope and curvature 0 at the end, no crossing), so that the
// offset's velocity starts at v0 whole. Kept as two vec4s: (x0, r) and (v0 across x0, 1 / t1).
// An offset within DECAY_NEGLIGIBLE (1 + |v0| duration) has no direction a device's rounding
// would keep (a pose equal to the target's up to the last bits): it counts as 0, and all of v0
// leaves and returns.
struct DecayChannel {
    along: vec4<f32>,
    across: vec4<f32>,
}

fn decay_setup(x0: vec3<f32>, v0: vec3<f32>, duration: f32) -> DecayChannel {
    let len = length(x0);
    if (!(len > DECAY_NEGLIGIBLE * (1.0 + length(v0) * duration)) || !(duration > 0.0)) {
        return DecayChannel(vec4<f32>(0.0), vec4<f32>(v0, 0.0));
    }
    let dir = x0 / len;
    let along = dot(v0, dir);
    var t1 = duration;
    if (along < 0.0) {
        t1 = min(t1, -5.0 * len / along);
    }
    return DecayChannel(vec4<f32>(x0, along * t1 / len), vec4<f32>(v0 - dir * along, 1.0 / t1));
}

// A channel's offset t seconds in (`shape`: t (1 - t/duration)⁴, the same for every channel).
fn decay_channel(c: DecayChannel, t: f32, shape: f32) -> vec3<f32> {
    return c.along.xyz * bollo_unit(c.along.w, max(t, 0.0) * c.across.w) + c.across.xyz * shape;
}

// A joint's decay: a channel each for translation, rotation and scale, kept in the two
// LocalPose slots of the local pose buffer where the source's pose and velocity were.
struct Decay {
    t: DecayChannel,
    r: DecayChannel,
    s: DecayChannel,
}

fn decay_start(x0: PoseDelta, v0: PoseDelta, duration: f32) -> Decay {
    return Decay(decay_setup(x0.t, v0.t, duration), decay_setup(x0.r, v0.r, duration), decay_setup(x0.s, v0.s, duration));
}

fn decay_from_slots(a: LocalPose, b: LocalPose) -> Decay {
    return Decay(
        DecayChannel(a.translation, b.translation),
        DecayChannel(a.rotation, b.rotation),
        DecayChannel(a.scale, b.scale),
    );
}

// The slots that keep it: (x0, r) of each channel, then (across, 1 / t1).
fn decay_to_slots(d: Decay) -> array<LocalPose, 2> {
    return array<LocalPose, 2>(
        LocalPose(d.t.along, d.r.along, d.s.along),
        LocalPose(d.t.across, d.r.across, d.s.across),
    );
}

// The offset t seconds into a decay of `duration`: 0 from the end on.
fn decay_offset(d: Decay, t: f32, duration: f32) -> PoseDelta {
    if (!(t < duration)) {
        return PoseDelta(vec3<f32>(0.0), vec3<f32>(0.0), vec3<f32>(0.0));
    }
    let u = 1.0 - max(t, 0.0) / duration;
    let u2 = u * u;
    let shape = max(t, 0.0) * u2 * u2;
    return PoseDelta(decay_channel(d.t, t, shape), decay_channel(d.r, t, shape), decay_channel(d.s, t, shape));
}

// Pose p moved on by velocity v (per second, as pose_sub's differences) for `by` seconds.
fn pose_advance(p: LocalPose, v: PoseDelta, by: f32) -> LocalPose {
    return pose_add(p, delta_scaled(v, by));
}

// The velocity from pose `prev` to pose `now` over dt seconds (0 when dt is below
// VELOCITY_MIN_DT).
fn pose_velocity(now: LocalPose, prev: LocalPose, dt: f32) -> PoseDelta {
    if (!(dt >= VELOCITY_MIN_DT)) {
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

// A morph weight under an inertialized transition (`bits`, the blend list's inertia bits) t
// seconds in: mixed from `kept`, the weight shown when the transition started, into the target's
// `w` as dead blending mixes (smoothstep over `duration`), with no velocity; `w` otherwise.
fn inertia_morph_weight(bits: u32, t: f32, duration: f32, kept: f32, w: f32) -> f32 {
    if ((bits & (INERTIA_OFFSET | INERTIA_DEAD_BLEND)) == 0u || !(t < duration)) {
        return w;
    }
    return mix(kept, w, dead_weight(t, duration));
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
