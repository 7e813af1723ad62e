//! The IK solvers, the CPU mirror (`cpu::two_bone_ik`, `cpu::aim_ik`) and the f64 reference
//! (`reference::two_bone_ik`, `reference::aim_ik`), against ozz-animation's expectations.
//!
//! The `ozz_*` cases are reproduced from ozz-animation's test suite (MIT licence, Copyright (c)
//! Guillaume Blanc): `test/animation/runtime/ik_two_bone_job_tests.cc` and
//! `test/animation/runtime/ik_aim_job_tests.cc`. Same joint matrices and parent transforms,
//! targets, poles, mid axes, twists, softens, weights and expected quaternions; ozz's tolerance
//! 2e-3 per component (here up to the sign of a quaternion); ozz's reach check
//! (`_ExpectReached`: the chain rebuilt with the corrections has its end within 1e-2 of the
//! target exactly when reached, and the `reached` flag says the same). ozz's API checks (null
//! pointers, `Validate`) have no Rust counterpart and are left out. Every case runs through both
//! the CPU mirror and the f64 reference.
//!
//! Our one documented difference: where ozz's output is undefined or NaN (a pole parallel to the
//! target, a zero-length start-to-target, a joint with no inverse), ours is defined (the
//! identity where nothing better is), never NaN. There the tests check that the output is
//! finite and unit, plus whatever else ozz checks.
//!
//! Then: random chains and aim jobs, the mirror against the reference; degenerate inputs; and a
//! check that the comparisons can fail.

use glam::{DMat4, DQuat, DVec3, DVec4, Mat4, Quat, Vec3, Vec4};
use std::collections::BTreeMap;
use wgpu_anim::Affine;
use wgpu_anim::ik::{AimJob, TwoBoneJob};
use wgpu_anim::{cpu, reference};

/// ozz's `EXPECT_SIMDQUATERNION_EQ_TOL(..., 2e-3f)`, per component.
const OZZ_TOL: f64 = 2e-3;
/// ozz's `EXPECT_SIMDQUATERNION_EQ_EST` (`kFloatNearEstTolerance`).
const OZZ_EST_TOL: f64 = 1e-2;
/// ozz's `_ExpectReached`: the rebuilt end within this of the target.
const REACH_DISTANCE: f64 = 1e-2;
/// An output that says it reached: its rebuilt end (two-bone) or its corrected forward line
/// through the offset (aim, at full weight) within this of the target, relative to the target's
/// distance from the joint (at least 1).
const MISS_TOL: f64 = 1e-3;
/// A quaternion's length within this of 1.
const UNIT_TOL: f64 = 1e-5;
/// The mirror against the reference on random draws, per component up to sign (about 2e-3 rad);
/// the worst seen at these seeds is below 1e-4.
const PROPERTY_TOL: f64 = 1e-3;
const DRAWS: usize = 4000;
const ID: DQuat = DQuat::IDENTITY;
const X: DVec3 = DVec3::X;
const Y: DVec3 = DVec3::Y;
const Z: DVec3 = DVec3::Z;

// ---------------------------------------------------------------------------------------------
// Jobs, outputs, comparisons

/// ozz's `IKTwoBoneJob` defaults: target 0, pole +Y, mid axis +Z, no twist, soften 1, weight 1.
const TWO_BONE: TwoBoneJob = TwoBoneJob {
    start: Affine::IDENTITY,
    mid: Affine::IDENTITY,
    end: Affine::IDENTITY,
    target: Vec3::ZERO,
    pole: Vec3::Y,
    mid_axis: Vec3::Z,
    twist: 0.0,
    soften: 1.0,
    weight: 1.0,
};

/// ozz's `IKAimJob` defaults: target 0, forward +X, no offset, up +Y, pole +Y, no twist, weight 1.
const AIM: AimJob = AimJob {
    joint: Affine::IDENTITY,
    target: Vec3::ZERO,
    forward: Vec3::X,
    offset: Vec3::ZERO,
    up: Vec3::Y,
    pole: Vec3::Y,
    twist: 0.0,
    weight: 1.0,
};

fn two_bone_job(chain: [Mat4; 3]) -> TwoBoneJob {
    let [start, mid, end] = chain.map(|m| Affine::from_mat4(&m));
    edit(TWO_BONE, |j| (j.start, j.mid, j.end) = (start, mid, end))
}

fn aim_job(joint: Mat4) -> AimJob {
    edit(AIM, |j| j.joint = Affine::from_mat4(&joint))
}

/// `job` changed by `f`.
fn edit<J: Copy>(mut job: J, f: impl FnOnce(&mut J)) -> J {
    f(&mut job);
    job
}

fn v(x: f32, y: f32, z: f32) -> Vec3 {
    Vec3::new(x, y, z)
}

/// A rotation of `deg` degrees about `axis` (ozz's kPi_2 is 90).
fn rot(axis: DVec3, deg: f64) -> DQuat {
    DQuat::from_axis_angle(axis.normalize(), deg.to_radians())
}

fn dquat(q: Vec4) -> DQuat {
    DQuat::from_vec4(q.as_dvec4())
}

fn dmat(a: &Affine) -> DMat4 {
    a.to_mat4().as_dmat4()
}

/// One solver's output: its corrections (start and mid, or the aim's one) and its flag.
struct Out {
    solver: &'static str,
    q: Vec<DQuat>,
    reached: bool,
}

fn out(solver: &'static str, q: Vec<DQuat>, reached: bool) -> Out {
    Out { solver, q, reached }
}

/// One output's corrections against another's: the worst component difference, up to sign.
fn quats_error(a: &Out, b: &Out) -> f64 {
    let errors = a.q.iter().zip(&b.q).map(|(&x, &y)| quat_error(x, y));
    errors.fold(0.0, f64::max)
}

/// What the tests need of a job type.
trait Job: Copy + std::fmt::Debug {
    /// The CPU mirror's output, then the f64 reference's.
    fn both(&self) -> [Out; 2];
    /// How far an output that says it reached is from a solution, relative to the target's
    /// distance from the joint (at least 1); `None` where it does not say so.
    fn miss(&self, out: &Out) -> Option<f64>;
    /// A random job ([`random_two_bone`], [`random_aim`]).
    fn draw(rng: &mut Rng) -> Self;
    /// Why a random job is not compared ([`two_bone_excluded`], [`aim_excluded`]).
    fn excluded(&self) -> Option<&'static str>;
}

impl Job for TwoBoneJob {
    fn both(&self) -> [Out; 2] {
        let (c, (start, mid, reached)) = (cpu::two_bone_ik(self), reference::two_bone_ik(self));
        let mirror = out("cpu", vec![dquat(c.start), dquat(c.mid)], c.reached);
        [mirror, out("f64", vec![start, mid], reached)]
    }

    /// The rebuilt end's distance to the target.
    fn miss(&self, out: &Out) -> Option<f64> {
        let scale = (self.target - self.start.to_mat4().w_axis.truncate()).length().max(1.0);
        out.reached
            .then(|| end_miss(self, out.q[0], out.q[1]) / f64::from(scale))
    }

    fn draw(rng: &mut Rng) -> Self {
        random_two_bone(rng)
    }

    fn excluded(&self) -> Option<&'static str> {
        two_bone_excluded(self)
    }
}

impl Job for AimJob {
    fn both(&self) -> [Out; 2] {
        let (c, (rotation, reached)) = (cpu::aim_ik(self), reference::aim_ik(self));
        [
            out("cpu", vec![dquat(c.rotation)], c.reached),
            out("f64", vec![rotation], reached),
        ]
    }

    /// At full weight, the target's distance to the aimed line.
    fn miss(&self, out: &Out) -> Option<f64> {
        let scale = (self.target - self.joint.to_mat4().w_axis.truncate()).length().max(1.0);
        let miss = aim_miss(self, out.q[0]).map(|m| m / f64::from(scale));
        miss.filter(|_| out.reached && self.weight >= 1.0)
    }

    fn draw(rng: &mut Rng) -> Self {
        random_aim(rng)
    }

    fn excluded(&self) -> Option<&'static str> {
        aim_excluded(self)
    }
}

/// ozz's `_ExpectReached` distance: start · R(q_start), then mid's local matrix and R(q_mid),
/// then end's local matrix; the rebuilt end's distance to the target.
fn end_miss(job: &TwoBoneJob, q_start: DQuat, q_mid: DQuat) -> f64 {
    let (start, mid, end) = (dmat(&job.start), dmat(&job.mid), dmat(&job.end));
    let mid_corrected = start * DMat4::from_quat(q_start) * start.inverse() * mid * DMat4::from_quat(q_mid);
    let end_corrected = mid_corrected * mid.inverse() * end;
    end_corrected.w_axis.truncate().distance(job.target.as_dvec3())
}

/// The target's distance to the aimed line: through joint · R(q) · offset along joint · R(q) ·
/// forward (ozz's offsetted forward puts the target on it, behind the offset when the offset is
/// outside the target's sphere). `None` with nothing to aim at (no inverse, target on the joint).
fn aim_miss(job: &AimJob, q: DQuat) -> Option<f64> {
    let joint = dmat(&job.joint);
    let target = job.target.as_dvec3();
    if joint.determinant() == 0.0 || joint.inverse().transform_point3(target).length_squared() == 0.0 {
        return None;
    }
    let corrected = joint * DMat4::from_quat(q);
    let from = target - corrected.transform_point3(job.offset.as_dvec3());
    let forward = corrected.transform_vector3(job.forward.as_dvec3()).normalize();
    Some((from - forward * from.dot(forward)).length())
}

/// The failed checks of one test, reported together.
#[derive(Default)]
struct Report(Vec<String>);

impl Report {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if !ok {
            self.0.push(what());
        }
    }

    fn finish(self, test: &str) {
        let shown = self.0.iter().take(30).cloned().collect::<Vec<_>>().join("\n  ");
        assert!(self.0.is_empty(), "{test}: {} failed:\n  {shown}", self.0.len());
    }
}

/// The largest component difference between `actual` and `expected` or `-expected`, whichever is
/// closer; infinite when `actual` is not finite.
fn quat_error(actual: DQuat, expected: DQuat) -> f64 {
    if !actual.is_finite() {
        return f64::INFINITY;
    }
    let diff = |e: DQuat| (DVec4::from(actual) - DVec4::from(e)).abs().max_element();
    diff(expected).min(diff(-expected))
}

fn check_quat(r: &mut Report, label: &str, actual: DQuat, expected: DQuat, tol: f64) {
    let e = quat_error(actual, expected);
    r.check(e <= tol, || format!("{label}: {actual} vs ±{expected}, {e:.1e} off"));
}

fn check_unit(r: &mut Report, label: &str, q: DQuat) {
    let ok = q.is_finite() && (q.length() - 1.0).abs() <= UNIT_TOL;
    r.check(ok, || format!("{label}: {q} is not a finite unit quaternion"));
}

/// What a run must give (`None`: anything): the corrections (start and mid, or the aim's), the
/// flag; where the flag is expected true, a solution ([`Job::miss`]).
#[derive(Clone, Copy)]
struct Expect {
    q: [Option<DQuat>; 2],
    reached: Option<bool>,
    tol: f64,
}

fn expect(start: Option<DQuat>, mid: Option<DQuat>, reached: Option<bool>) -> Expect {
    Expect {
        q: [start, mid],
        reached,
        tol: OZZ_TOL,
    }
}

/// ozz's `EXPECT_REACHED` and both corrections.
fn reached(start: DQuat, mid: DQuat) -> Expect {
    expect(Some(start), Some(mid), Some(true))
}

/// ozz's `EXPECT_NOT_REACHED` and both corrections.
fn unreached(start: DQuat, mid: DQuat) -> Expect {
    expect(Some(start), Some(mid), Some(false))
}

/// An aim correction and reached: ozz checks the flag only in its offset cases, but with no
/// offset its `ComputeOffsettedForward` always succeeds (0 ≤ |target|²).
fn aimed(q: DQuat) -> Expect {
    expect(Some(q), None, Some(true))
}

/// Checks both solvers' outputs: finite unit corrections, and what `want` says.
fn check<J: Job>(r: &mut Report, case: &str, job: &J, want: Expect) {
    for out in job.both() {
        let label = format!("{case} [{}]", out.solver);
        for (&q, expected) in out.q.iter().zip(want.q) {
            check_unit(r, &label, q);
            if let Some(e) = expected {
                check_quat(r, &label, q, e, want.tol);
            }
        }
        let (flag, ok) = (out.reached, want.reached.is_none_or(|w| w == out.reached));
        r.check(ok, || format!("{label}: reached {flag}"));
        let miss = job.miss(&out).filter(|_| want.reached == Some(true));
        r.check(miss.is_none_or(|m| m < MISS_TOL), || format!("{label}: {miss:?} off"));
    }
}

/// [`check`], then ozz's `_ExpectReached` where the flag is expected: the rebuilt end within
/// 1e-2 of the target exactly when reached.
fn check_two_bone(r: &mut Report, case: &str, job: &TwoBoneJob, want: Expect) {
    check(r, case, job, want);
    let Some(reach) = want.reached else { return };
    for out in job.both() {
        let miss = end_miss(job, out.q[0], out.q[1]);
        let why = || format!("{case} [{}]: the end is {miss:.2e} from the target", out.solver);
        r.check((miss < REACH_DISTANCE) == reach, why);
    }
}

/// Runs the cases of a test (name, job, expectation) through `check`.
fn run<J, E: Copy>(test: &str, cases: &[(&str, J, E)], check: fn(&mut Report, &str, &J, E)) {
    let mut r = Report::default();
    for (case, job, want) in cases {
        check(&mut r, case, job, *want);
    }
    r.finish(test);
}

// ---------------------------------------------------------------------------------------------
// ozz: ik_two_bone_job_tests.cc

/// ozz's test chain: start at the origin, mid at +Y turned 90° about Z, end at (1, 1, 0).
fn ozz_chain() -> [Mat4; 3] {
    let mid = Mat4::from_rotation_translation(Quat::from_rotation_z(90f32.to_radians()), Vec3::Y);
    [Mat4::IDENTITY, mid, Mat4::from_translation(v(1.0, 1.0, 0.0))]
}

/// ozz's `mid_axis = Cross3(start - mid, end - mid)` (+Z for [`ozz_chain`]).
fn ozz_mid_axis(chain: &[Mat4; 3]) -> Vec3 {
    let [s, m, e] = chain.map(|c| c.w_axis.truncate());
    (s - m).cross(e - m)
}

/// The job most of ozz's two-bone tests set up: [`ozz_chain`], its mid axis, pole +Y.
fn ozz_two_bone() -> TwoBoneJob {
    edit(two_bone_job(ozz_chain()), |j| j.mid_axis = ozz_mid_axis(&ozz_chain()))
}

/// ozz's root transforms: identity, translated up, rotated (Euler yaw π/3), uniformly scaled,
/// non-uniformly scaled, mirrored.
fn ozz_parents() -> [(&'static str, Mat4); 6] {
    [
        ("identity", Mat4::IDENTITY),
        ("translated", Mat4::from_translation(Vec3::Y)),
        ("rotated", Mat4::from_rotation_y(60f32.to_radians())),
        ("uniformly scaled", Mat4::from_scale(Vec3::splat(2.0))),
        ("non-uniformly scaled", Mat4::from_scale(v(1.0, 2.0, 1.0))),
        ("mirrored", Mat4::from_scale(Vec3::splat(-3.0))),
    ]
}

#[test]
fn ozz_two_bone_start_joint_correction() {
    let mut r = Report::default();
    let chain = ozz_chain();
    for (name, parent) in ozz_parents() {
        let mut job = two_bone_job(chain.map(|m| parent * m));
        (job.mid_axis, job.pole) = (ozz_mid_axis(&chain), parent.transform_vector3(Vec3::Y));
        let cases = [
            ("no correction", v(1.0, 1.0, 0.0), ID),
            ("90", v(0.0, 1.0, 1.0), rot(Y, -90.0)),
            ("270", v(0.0, 1.0, -1.0), rot(Y, 90.0)),
        ];
        for (case, target, q_start) in cases {
            job.target = parent.transform_point3(target);
            check_two_bone(&mut r, &format!("{name} parent, {case}"), &job, reached(q_start, ID));
        }
    }
    r.finish("StartJointCorrection");
}

#[test]
fn ozz_two_bone_pole() {
    let job = |pole, target| edit(ozz_two_bone(), |j| (j.pole, j.target) = (pole, target));
    let start = |axis, deg| reached(rot(axis, deg), ID);
    let cases = [
        ("pole Y", job(Vec3::Y, v(1.0, 1.0, 0.0)), reached(ID, ID)),
        ("pole Z", job(Vec3::Z, v(1.0, 0.0, 1.0)), start(X, 90.0)),
        ("pole -Z", job(-Vec3::Z, v(1.0, 0.0, -1.0)), start(X, -90.0)),
        ("pole X", job(Vec3::X, v(1.0, -1.0, 0.0)), start(Z, -90.0)),
        ("pole -X", job(-Vec3::X, v(-1.0, 1.0, 0.0)), start(Z, 90.0)),
    ];
    run("Pole", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_zero_scale() {
    let (job, want) = (
        two_bone_job([Mat4::from_scale(Vec3::ZERO); 3]),
        expect(Some(ID), Some(ID), None),
    );
    run("ZeroScale", &[("zero scale", job, want)], check_two_bone);
}

#[test]
fn ozz_two_bone_soften() {
    let job = |x, soften| edit(ozz_two_bone(), |j| (j.target, j.soften) = (v(x, 0.0, 0.0), soften));
    let reach = |flag| expect(None, None, Some(flag));
    let cases = [
        ("reachable", job(2.0, 1.0), reached(rot(Z, -90.0), rot(Z, 90.0))),
        ("reachable, softened", job(2.0 * 0.5, 0.5), reach(true)),
        ("reachable, softened (.4)", job(2.0 * 0.4, 0.5), reach(true)),
        ("not reachable, softened", job(2.0 * 0.6, 0.5), reach(false)),
        ("not reachable, softened at max", job(2.0 * 0.6, 0.0), reach(false)),
        ("not reachable, softened (2)", job(2.0, 0.5), reach(false)),
        ("not reachable, a bit too far", job(3.0, 1.0), reach(false)),
    ];
    run("Soften", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_twist() {
    let base = edit(ozz_two_bone(), |j| j.target = v(1.0, 1.0, 0.0));
    let job = |deg: f32| edit(base, |j| j.twist = deg.to_radians());
    let diagonal = DVec3::new(1.0, 1.0, 0.0);
    let cases = [
        ("twist 0", job(0.0), reached(ID, ID)),
        ("twist pi/2", job(90.0), reached(rot(diagonal, 90.0), ID)),
        ("twist pi", job(180.0), reached(rot(diagonal, -180.0), ID)),
        ("twist 2pi", job(360.0), reached(ID, ID)),
    ];
    run("Twist", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_weight() {
    let job = |weight| edit(ozz_two_bone(), |j| (j.target, j.weight) = (v(2.0, 0.0, 0.0), weight));
    let full = reached(rot(Z, -90.0), rot(Z, 90.0));
    let (none, half) = (unreached(ID, ID), unreached(rot(Z, -90.0 * 0.5), rot(Z, 90.0 * 0.5)));
    let estimated = Expect {
        tol: OZZ_EST_TOL,
        ..none
    };
    let cases = [
        ("maximum weight", job(1.0), full),
        ("weight > 1 is clamped", job(1.1), full),
        ("0 weight", job(0.0), estimated),
        ("weight < 0 is clamped", job(-0.1), estimated),
        (".5 weight", job(0.5), half),
    ];
    run("Weight", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_pole_target_alignment() {
    let job = |target| edit(ozz_two_bone(), |j| j.target = target);
    let sqrt2 = std::f32::consts::SQRT_2;
    // ozz: "qstart is undefined, many solutions in this case". Ours is finite and unit (checked
    // for every case); ozz's reach and mid checks still apply.
    let undefined = expect(None, Some(ID), Some(true));
    let (defined, full_extent) = (reached(rot(Z, 45.0), ID), expect(None, Some(rot(Z, 90.0)), None));
    let cases = [
        ("reachable, undefined qstart", job(v(0.0, sqrt2, 0.0)), undefined),
        ("reachable, defined qstart", job(v(0.001, sqrt2, 0.0)), defined),
        ("full extent, undefined qstart", job(v(0.0, 3.0, 0.0)), full_extent),
    ];
    run("PoleTargetAlignment", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_mid_axis() {
    let job = edit(ozz_two_bone(), |j| j.target = v(1.0, 1.0, 0.0));
    let negative = edit(job, |j| j.mid_axis = -j.mid_axis);
    // The end moved so that the three joints are aligned.
    let aligned = edit(job, |j| {
        j.end = Affine::from_mat4(&Mat4::from_translation(2.0 * Vec3::Y))
    });
    let cases = [
        ("positive mid_axis", job, reached(ID, ID)),
        ("negative mid_axis", negative, reached(rot(Y, 180.0), rot(Z, 180.0))),
        ("aligned joints", aligned, reached(ID, rot(Z, -90.0))),
    ];
    run("MidAxis", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_aligned_joints_and_target() {
    let chain = two_bone_job([0.0, 1.0, 2.0].map(|x| Mat4::from_translation(v(x, 0.0, 0.0))));
    let job = |x| edit(chain, |j| j.target = v(x, 0.0, 0.0));
    let cases = [
        ("aligned and reachable", job(2.0), reached(ID, ID)),
        ("aligned, unreachable", job(3.0), unreached(ID, ID)),
    ];
    run("AlignedJointsAndTarget", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_zero_length_start_target() {
    // ozz's default mid axis (+Z), the target on the start. ozz checks no reach here: the mid
    // bends -90° to bring the end back onto the start.
    let (job, want) = (two_bone_job(ozz_chain()), expect(Some(ID), Some(rot(Z, -90.0)), None));
    let cases = [("0 length from start to target", job, want)];
    run("ZeroLengthStartTarget", &cases, check_two_bone);
}

#[test]
fn ozz_two_bone_zero_length_bone_chain() {
    // ozz: "just expecting it's not crashing", then EXPECT_NOT_REACHED.
    let (job, want) = (edit(TWO_BONE, |j| j.target = Vec3::X), expect(None, None, Some(false)));
    run(
        "ZeroLengthBoneChain",
        &[("zero length bones", job, want)],
        check_two_bone,
    );
}

// ---------------------------------------------------------------------------------------------
// ozz: ik_aim_job_tests.cc

#[test]
fn ozz_aim_correction() {
    let mut r = Report::default();
    for (name, parent) in ozz_parents() {
        let mut job = edit(aim_job(parent), |j| j.pole = parent.transform_vector3(Vec3::Y));
        let cases = [
            ("x", Vec3::X, ID),
            ("-x", -Vec3::X, rot(Y, 180.0)),
            ("z", Vec3::Z, rot(Y, -90.0)),
            ("-z", -Vec3::Z, rot(Y, 90.0)),
            ("45 up y", v(1.0, 1.0, 0.0), rot(Z, 45.0)),
            ("45 up y, further", v(2.0, 2.0, 0.0), rot(Z, 45.0)),
        ];
        for (case, target, q) in cases {
            job.target = parent.transform_point3(target);
            check(&mut r, &format!("{name} parent, {case}"), &job, aimed(q));
        }
    }
    r.finish("Correction");
}

/// The job most of ozz's aim tests set up: the joint at the origin, the target +X.
const AIM_X: AimJob = AimJob { target: Vec3::X, ..AIM };

#[test]
fn ozz_aim_forward() {
    let job = |forward| AimJob { forward, ..AIM_X };
    let cases = [
        ("x", job(Vec3::X), aimed(ID)),
        ("-x", job(-Vec3::X), aimed(rot(Y, -180.0))),
        ("z", job(Vec3::Z), aimed(rot(Y, 90.0))),
    ];
    run("Forward", &cases, check);
}

#[test]
fn ozz_aim_up() {
    let job = |up| AimJob { up, ..AIM_X };
    let cases = [
        ("up y", job(Vec3::Y), aimed(ID)),
        ("up -y", job(-Vec3::Y), aimed(rot(X, 180.0))),
        ("up z", job(Vec3::Z), aimed(rot(X, -90.0))),
        ("up 2*z", job(Vec3::Z * 2.0), aimed(rot(X, -90.0))),
        ("up very small z", job(Vec3::Z * 1e-9), aimed(rot(X, -90.0))),
        ("up is zero", job(Vec3::ZERO), aimed(ID)),
    ];
    run("Up", &cases, check);
}

#[test]
fn ozz_aim_pole() {
    let job = |pole| AimJob { pole, ..AIM_X };
    let cases = [
        ("pole y", job(Vec3::Y), aimed(ID)),
        ("pole -y", job(-Vec3::Y), aimed(rot(X, 180.0))),
        ("pole z", job(Vec3::Z), aimed(rot(X, 90.0))),
        ("pole 2*z", job(Vec3::Z * 2.0), aimed(rot(X, 90.0))),
        ("pole very small z", job(Vec3::Z * 1e-9), aimed(rot(X, 90.0))),
    ];
    run("Pole", &cases, check);
}

#[test]
fn ozz_aim_offset() {
    let job = |offset| AimJob { offset, ..AIM_X };
    // The last case: ozz's comment says "unreachable", but it expects reached (the target is
    // √2 from the joint, the offset 1).
    let translated = edit(job(Vec3::Y), |j| {
        j.joint = Affine::from_mat4(&Mat4::from_translation(Vec3::Y))
    });
    let (outside, sqrt2_2) = (expect(Some(ID), None, Some(false)), std::f32::consts::FRAC_1_SQRT_2);
    let cases = [
        ("no offset", job(Vec3::ZERO), aimed(ID)),
        ("inside sphere (y)", job(v(0.0, sqrt2_2, 0.0)), aimed(rot(Z, -45.0))),
        ("inside sphere (x, y)", job(v(0.5, 0.5, 0.0)), aimed(rot(Z, -30.0))),
        ("inside sphere (-x, y)", job(v(-0.5, 0.5, 0.0)), aimed(rot(Z, -30.0))),
        ("inside sphere (x, z)", job(v(0.5, 0.0, 0.5)), aimed(rot(Y, 30.0))),
        ("on target sphere", job(Vec3::Y), aimed(rot(Z, -90.0))),
        ("outside of target sphere", job(v(0.0, 2.0, 0.0)), outside),
        ("translated joint, offset inside", translated, aimed(rot(Z, -90.0))),
    ];
    run("Offset", &cases, check);
}

#[test]
fn ozz_aim_twist() {
    let job = |deg: f32| edit(AIM_X, |j| j.twist = deg.to_radians());
    let cases = [
        ("twist 0", job(0.0), aimed(ID)),
        ("pi/2", job(90.0), aimed(rot(X, 90.0))),
        ("-pi/2", job(-90.0), aimed(rot(X, -90.0))),
    ];
    run("Twist", &cases, check);
}

#[test]
fn ozz_aim_aligned_target_up_and_pole() {
    let job = |target| AimJob { target, ..AIM };
    let cases = [
        ("not aligned", job(Vec3::X), aimed(ID)),
        ("aligned y", job(Vec3::Y), aimed(rot(Z, 90.0))),
        ("aligned 2*y", job(Vec3::Y * 2.0), aimed(rot(Z, 90.0))),
        ("aligned -2*y", job(Vec3::Y * -2.0), aimed(rot(Z, -90.0))),
    ];
    run("AlignedTargetUp", &cases, check);
    // AlignedTargetPole: the same job (up and pole +Y), its two cases those above.
    run("AlignedTargetPole", &cases[..2], check);
}

#[test]
fn ozz_aim_target_too_close() {
    run("TargetTooClose", &[("target on the joint", AIM, aimed(ID))], check);
}

#[test]
fn ozz_aim_weight() {
    let base = edit(AIM, |j| j.target = Vec3::Z);
    let job = |weight| AimJob { weight, ..base };
    let cases = [
        ("full weight", job(1.0), aimed(rot(Y, -90.0))),
        ("weight > 1", job(2.0), aimed(rot(Y, -90.0))),
        ("half weight", job(0.5), aimed(rot(Y, -45.0))),
        ("zero weight", job(0.0), aimed(ID)),
        ("weight < 0", job(-0.5), aimed(ID)),
    ];
    run("Weight", &cases, check);
}

#[test]
fn ozz_aim_zero_scale() {
    // A joint with no inverse: ozz asserts the identity only.
    let (job, want) = (aim_job(Mat4::from_scale(Vec3::ZERO)), expect(Some(ID), None, None));
    run("ZeroScale", &[("zero scale", job, want)], check);
}

// ---------------------------------------------------------------------------------------------
// Random draws: the mirror against the f64 reference

/// xorshift64* (Vigna): deterministic draws with no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [lo, hi).
    fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * ((self.next() >> 40) as f32 / (1u32 << 24) as f32)
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }

    fn direction(&mut self) -> Vec3 {
        loop {
            let p = v(self.range(-1.0, 1.0), self.range(-1.0, 1.0), self.range(-1.0, 1.0));
            if (1e-2..=1.0).contains(&p.length_squared()) {
                return p.normalize();
            }
        }
    }

    fn rotation(&mut self) -> Quat {
        let axis = self.direction();
        Quat::from_axis_angle(axis, self.range(-3.2, 3.2))
    }

    /// A rigid joint below a random parent: rotated, translated, with unit, uniform or
    /// non-uniform scale, a third of the time mirrored on one axis and a third on all three.
    fn joint(&mut self) -> Mat4 {
        let mut scale = match self.next() % 3 {
            0 => Vec3::ONE,
            1 => Vec3::splat(self.range(0.3, 3.0)),
            _ => v(self.range(0.3, 3.0), self.range(0.3, 3.0), self.range(0.3, 3.0)),
        };
        match self.next() % 3 {
            0 => scale[(self.next() % 3) as usize] *= -1.0,
            1 => scale = -scale,
            _ => {}
        }
        let translation = self.direction() * self.range(0.0, 5.0);
        let parent = Mat4::from_scale_rotation_translation(scale, self.rotation(), translation);
        parent * Mat4::from_rotation_translation(self.rotation(), self.direction())
    }

    /// A pole (or up): a tenth of the time along `line`.
    fn pole(&mut self, line: Vec3) -> Vec3 {
        let free = self.direction() * self.range(0.1, 3.0);
        if self.one_in(10) { line } else { free }
    }

    fn twist(&mut self) -> f32 {
        if self.one_in(3) { 0.0 } else { self.range(-7.0, 7.0) }
    }

    /// 0, -0.5 or 1.5 an eighth of the time each, in [0, 1) a quarter, 1 the rest.
    fn weight(&mut self) -> f32 {
        match self.next() % 8 {
            0 => 0.0,
            1 => -0.5,
            2 => 1.5,
            3 | 4 => self.range(0.0, 1.0),
            _ => 1.0,
        }
    }
}

/// A chain below a random parent. In the start's frame (rigid below the parent) the bones have
/// lengths in [0.2, 2] and turn by any angle about a mid axis perpendicular to both (ozz's
/// `Cross3(start - mid, end - mid)`, either sign); mid and end have any orientation. The target
/// is up to 1.3 × the chain's length from the start.
fn random_two_bone(rng: &mut Rng) -> TwoBoneJob {
    let start = rng.joint();
    let (a, b, first) = (rng.range(0.2, 2.0), rng.range(0.2, 2.0), rng.direction());
    let other = rng.direction();
    let axis = first.cross(other).normalize_or(first.any_orthonormal_vector());
    let second = Quat::from_axis_angle(axis, rng.range(-3.2, 3.2)) * first;
    let mid_rotation = rng.rotation();
    let mid = start * Mat4::from_rotation_translation(mid_rotation, first * a);
    let end = mid * Mat4::from_rotation_translation(rng.rotation(), mid_rotation.inverse() * second * b);
    let mut job = two_bone_job([start, mid, end]);
    job.mid_axis = mid_rotation.inverse() * axis * if rng.one_in(2) { -1.0 } else { 1.0 };
    job.target = start.transform_point3(rng.direction() * rng.range(0.0, 1.3) * (a + b));
    job.pole = rng.pole(job.target - start.w_axis.truncate());
    job.soften = if rng.one_in(2) { 1.0 } else { rng.range(0.0, 1.0) };
    (job.twist, job.weight) = (rng.twist(), rng.weight());
    job
}

/// An aim job: a random joint, target (up to 3 from it in its frame), forward, offset (none a
/// third of the time), up and pole.
fn random_aim(rng: &mut Rng) -> AimJob {
    let joint = rng.joint();
    let mut job = aim_job(joint);
    job.target = joint.transform_point3(rng.direction() * rng.range(0.0, 3.0));
    job.forward = rng.direction();
    let offset = rng.direction() * rng.range(0.0, 1.0);
    job.offset = if rng.one_in(3) { Vec3::ZERO } else { offset };
    job.up = rng.direction() * rng.range(0.1, 2.0);
    job.pole = rng.pole(job.target - joint.w_axis.truncate());
    (job.twist, job.weight) = (rng.twist(), rng.weight());
    job
}

/// `a` within 1° of the line of `b`, either way.
fn near_line(a: DVec3, b: DVec3) -> bool {
    a.cross(b).length() <= 1f64.to_radians().sin() * a.length() * b.length()
}

/// `a` within 1° of opposite `b`.
fn near_opposite(a: DVec3, b: DVec3) -> bool {
    a.dot(b) <= 179f64.to_radians().cos() * a.length() * b.length()
}

/// A weighted correction of nearly a half turn (|w| < 1e-3, within 0.12°): its sign, so the way
/// a weight below 1 nlerps it from the identity, is up to rounding.
fn near_half_turn(weight: f32, qs: &[DQuat]) -> bool {
    weight > 0.0 && weight < 1.0 && qs.iter().any(|q| q.w.abs() < 1e-3)
}

/// Why a two-bone draw is too near a singularity for the f32 mirror to match the f64 reference
/// within [`PROPERTY_TOL`] (`None`: compared). In the start joint's frame, where the solver
/// works: the target within 1e-3 × the chain's length of the start; the pole within 1° of the
/// target line (the chain's plane is undefined); the target within 1e-4 × the chain's length
/// of the edge of reach (where the flag flips); an interior angle, before or after, whose cosine
/// is within 1e-3 of ±1 (~2.6° of straight or folded, where `acos` amplifies rounding by
/// 1/√(1−c²)); the bent chain's end within 1° of opposite the target (the shortest arc's axis is
/// undefined); a weighted half turn ([`near_half_turn`]).
fn two_bone_excluded(job: &TwoBoneJob) -> Option<&'static str> {
    let (start, mid, end) = (dmat(&job.start), dmat(&job.mid), dmat(&job.end));
    let inv = start.inverse();
    let mid_ss = inv.transform_point3(mid.w_axis.truncate());
    let end_ss = inv.transform_point3(end.w_axis.truncate());
    let (a, b, c) = (mid_ss.length(), (end_ss - mid_ss).length(), end_ss.length());
    let target = inv.transform_point3(job.target.as_dvec3());
    let len = target.length();
    if len < 1e-3 * (a + b) {
        return Some("target at the start");
    }
    if near_line(inv.transform_vector3(job.pole.as_dvec3()), target) {
        return Some("pole along the target line");
    }
    let (da, ds) = (
        (a + b) * f64::from(job.soften).clamp(0.0, 1.0),
        (a + b) * (1.0 - f64::from(job.soften)),
    );
    if (len - da).abs() < 1e-4 * (a + b) || (len - (a - b).abs()).abs() < 1e-4 * (a + b) {
        return Some("target on the edge of reach");
    }
    // ozz's softened distance: da + ds (1 − (3 / (α + 3))⁴), α = (len − da) / ds.
    let soft = |alpha: f64| da + ds * (1.0 - (3.0 / (alpha + 3.0)).powi(4));
    let softened = if len > da && ds > 0.0 {
        soft((len - da) / ds)
    } else {
        len
    };
    let cos = |d: f64| (a * a + b * b - d * d) / (2.0 * a * b);
    if [cos(c), cos(softened)].iter().any(|k| (k.abs() - 1.0).abs() < 1e-3) {
        return Some("chain straight or folded");
    }
    let (q_start, q_mid, _) = reference::two_bone_ik(&TwoBoneJob { weight: 1.0, ..*job });
    let end_ms = mid.inverse().transform_point3(end.w_axis.truncate());
    let bent_end = mid_ss + inv.transform_vector3(mid.transform_vector3(q_mid * end_ms));
    if near_opposite(bent_end, target) {
        return Some("end opposite the target");
    }
    near_half_turn(job.weight, &[q_start, q_mid]).then_some("weighted half turn")
}

/// Why an aim draw is not compared, in the joint's frame: the target within 1e-3 of the joint;
/// its squared distance within 0.1% of the offset's reach (where the flag flips and the aimed
/// point moves fast); the aimed direction within 1° of opposite the target; the up (which turns
/// with the aim) or the pole within 1° of the target line; a weighted half turn.
fn aim_excluded(job: &AimJob) -> Option<&'static str> {
    let inv = dmat(&job.joint).inverse();
    let to_target = inv.transform_point3(job.target.as_dvec3());
    let (forward, offset) = (job.forward.as_dvec3(), job.offset.as_dvec3());
    let (r2, along) = (to_target.length_squared(), forward.dot(offset));
    let across2 = offset.length_squared() - along * along;
    if r2.sqrt() < 1e-3 {
        return Some("target at the joint");
    }
    if (r2 - across2).abs() < 1e-3 * r2 {
        return Some("target on the offset's edge of reach");
    }
    if across2 > r2 {
        return None;
    }
    let aimed = offset + forward * ((r2 - across2).sqrt() - along);
    if near_opposite(aimed, to_target) {
        return Some("aim opposite the target");
    }
    if near_line(job.up.as_dvec3(), aimed) || near_line(inv.transform_vector3(job.pole.as_dvec3()), to_target) {
        return Some("up or pole along the target line");
    }
    let (q, _) = reference::aim_ik(&AimJob { weight: 1.0, ..*job });
    near_half_turn(job.weight, &[q]).then_some("weighted half turn")
}

/// The property: for [`DRAWS`] random jobs, both solvers' corrections are finite and unit; unless
/// [`Job::excluded`], they agree within [`PROPERTY_TOL`] and on the flag, and where the mirror
/// says it reached, it did ([`Job::miss`]). At least 80% of the draws must be compared.
fn property<J: Job>(test: &str, seed: u64) {
    let (mut rng, mut r) = (Rng(seed), Report::default());
    let (mut compared, mut worst, mut skipped) = (0, 0.0f64, BTreeMap::new());
    for i in 0..DRAWS {
        let job = J::draw(&mut rng);
        let [mirror, oracle] = job.both();
        for out in [&mirror, &oracle] {
            for &q in &out.q {
                check_unit(&mut r, &format!("draw {i} [{}]", out.solver), q);
            }
        }
        if let Some(reason) = job.excluded() {
            *skipped.entry(reason).or_insert(0) += 1;
            continue;
        }
        compared += 1;
        let e = quats_error(&mirror, &oracle);
        worst = worst.max(e);
        r.check(e <= PROPERTY_TOL, || format!("draw {i}: {e:.2e} apart: {job:?}"));
        let flags = (mirror.reached, oracle.reached);
        r.check(flags.0 == flags.1, || format!("draw {i}: reached {flags:?}: {job:?}"));
        let (off, ok) = (job.miss(&mirror), job.miss(&mirror).is_none_or(|m| m < MISS_TOL));
        r.check(ok, || format!("draw {i}: reached, {off:?} off: {job:?}"));
    }
    eprintln!("{test}: {compared} of {DRAWS} compared, worst difference {worst:.2e}; excluded {skipped:?}");
    assert!(compared * 5 > DRAWS * 4, "{test}: only {compared} of {DRAWS} compared");
    r.finish(test);
}

#[test]
fn random_two_bone_mirror_matches_f64_reference() {
    property::<TwoBoneJob>("random two-bone chains", 0x9E37_79B9_7F4A_7C15);
}

#[test]
fn random_aim_mirror_matches_f64_reference() {
    property::<AimJob>("random aim jobs", 0xD1B5_4A32_D192_ED03);
}

// ---------------------------------------------------------------------------------------------
// Degenerate inputs

/// Finite unit corrections from both solvers, the identity (within 1e-6) where `identity`, the
/// flag where `reached` is given, and where it is true, a solution.
const fn want(identity: bool, reached: Option<bool>) -> Expect {
    let q = if identity { Some(ID) } else { None };
    Expect {
        q: [q; 2],
        reached,
        tol: 1e-6,
    }
}

/// The identity, not reached: what the docs give for a weight ≤ 0 or NaN, a joint with no
/// inverse, a bone of zero length.
const NO_IK: Expect = want(true, Some(false));
const IDENTITY: Expect = want(true, None);
const FINITE: Expect = want(false, None);
const REACHED: Expect = want(false, Some(true));
const UNREACHED: Expect = want(false, Some(false));

/// A degenerate case: its name, what it must give, and how it changes the base job.
type Case<'a, J> = (&'a str, Expect, &'a dyn Fn(&mut J));

/// Checks each case's job ([`check`]), and that both solvers give it the same flag.
fn degenerate<J: Job>(test: &str, base: J, cases: &[Case<J>]) {
    let mut r = Report::default();
    for &(name, want, change) in cases {
        let job = edit(base, change);
        check(&mut r, name, &job, want);
        let flags = job.both().map(|o| o.reached);
        r.check(flags[0] == flags[1], || format!("{name}: reached {flags:?} (cpu, f64)"));
    }
    r.finish(test);
}

#[test]
fn degenerate_two_bone_inputs() {
    let base = edit(ozz_two_bone(), |j| j.target = v(1.2, 0.4, 0.3));
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let (zero, id) = (Affine::from_mat4(&Mat4::ZERO), Affine::IDENTITY);
    let under = |parent: Mat4, target| edit(two_bone_job(ozz_chain().map(|m| parent * m)), |j| j.target = target);
    let sheared = Mat4::from_scale_rotation_translation(v(2.0, -1.0, 0.5), Quat::from_rotation_x(0.7), Vec3::X);
    let scaled = |s: f32| under(Mat4::from_scale(Vec3::splat(s)), base.target * s);
    let at_start = under(sheared, sheared.w_axis.truncate());
    let cases: &[Case<TwoBoneJob>] = &[
        ("zero scale joints", NO_IK, &|j| [j.start, j.mid, j.end] = [zero; 3]),
        ("start zero scale", NO_IK, &|j| j.start = zero),
        ("mid zero scale", NO_IK, &|j| j.mid = zero),
        ("NaN in the start matrix", NO_IK, &|j| j.start.x.y = nan),
        ("infinite mid matrix", NO_IK, &|j| j.mid.y.y = inf),
        ("zero-length first bone", NO_IK, &|j| j.mid.y.w = 0.0),
        ("zero-length second bone", NO_IK, &|j| j.end = j.mid),
        ("joints at one point", NO_IK, &|j| [j.start, j.mid, j.end] = [id; 3]),
        ("target at the start, sheared", FINITE, &|j| *j = at_start),
        ("pole along the target", REACHED, &|j| j.pole = j.target * 3.0),
        ("pole along the first bone", REACHED, &|j| j.pole = Vec3::Y),
        ("zero pole", REACHED, &|j| j.pole = Vec3::ZERO),
        ("NaN target", UNREACHED, &|j| j.target = Vec3::NAN),
        ("infinite target", UNREACHED, &|j| j.target = v(inf, 0.0, 0.0)),
        ("-infinite target", UNREACHED, &|j| j.target = v(1.0, -inf, 1.0)),
        ("NaN pole", FINITE, &|j| j.pole = Vec3::NAN),
        ("infinite pole", FINITE, &|j| j.pole = v(0.0, inf, 0.0)),
        ("NaN mid axis", FINITE, &|j| j.mid_axis = Vec3::NAN),
        ("NaN twist", FINITE, &|j| j.twist = nan),
        ("infinite twist", FINITE, &|j| j.twist = inf),
        ("NaN soften", FINITE, &|j| j.soften = nan),
        ("NaN weight", NO_IK, &|j| j.weight = nan),
        ("zero weight", NO_IK, &|j| j.weight = 0.0),
        ("negative weight", NO_IK, &|j| j.weight = -1.0),
        ("-infinite weight", NO_IK, &|j| j.weight = -inf),
        ("infinite weight", REACHED, &|j| j.weight = inf),
        ("parent scale 1e12", REACHED, &|j| *j = scaled(1e12)),
        ("parent scale 1e-12", REACHED, &|j| *j = scaled(1e-12)),
    ];
    degenerate("degenerate two-bone inputs", base, cases);
}

#[test]
fn degenerate_aim_inputs() {
    let joint = Mat4::from_rotation_translation(Quat::from_rotation_y(0.4), Vec3::Y);
    let (target, offset) = (v(2.0, 1.5, -1.0), v(0.1, 0.2, 0.0));
    let base = edit(aim_job(joint), |j| (j.target, j.offset) = (target, offset));
    let (nan, inf, zero, o) = (f32::NAN, f32::INFINITY, Affine::from_mat4(&Mat4::ZERO), Vec3::ZERO);
    let cases: &[Case<AimJob>] = &[
        ("zero scale joint", IDENTITY, &|j| j.joint = zero),
        ("no inverse, no offset", IDENTITY, &|j| (j.joint, j.offset) = (zero, o)),
        ("NaN in the joint matrix", IDENTITY, &|j| j.joint.z.x = nan),
        ("target on the joint", IDENTITY, &|j| {
            (j.target, j.offset) = (Vec3::Y, o)
        }),
        ("target inside the offset", NO_IK, &|j| j.target = v(0.05, 1.0, 0.0)),
        ("pole along the target", REACHED, &|j| j.pole = j.target - Vec3::Y),
        ("up along the target", REACHED, &|j| (j.offset, j.up) = (o, Vec3::X)),
        ("zero up", REACHED, &|j| j.up = o),
        ("zero pole", REACHED, &|j| j.pole = o),
        ("NaN target", IDENTITY, &|j| j.target = Vec3::NAN),
        ("infinite target", IDENTITY, &|j| j.target = v(0.0, 0.0, inf)),
        ("NaN up", FINITE, &|j| j.up = Vec3::NAN),
        ("NaN pole", FINITE, &|j| j.pole = Vec3::NAN),
        ("NaN offset", FINITE, &|j| j.offset = Vec3::NAN),
        ("infinite offset", FINITE, &|j| j.offset = v(inf, 0.0, 0.0)),
        ("NaN twist", FINITE, &|j| j.twist = nan),
        ("NaN weight", IDENTITY, &|j| j.weight = nan),
        ("zero weight", IDENTITY, &|j| j.weight = 0.0),
        ("-infinite weight", IDENTITY, &|j| j.weight = -inf),
        ("infinite weight", REACHED, &|j| j.weight = inf),
    ];
    degenerate("degenerate aim inputs", base, cases);
}

// ---------------------------------------------------------------------------------------------
// The comparisons can fail

#[test]
fn comparisons_detect_mismatches() {
    let (expected, mut r) = (rot(Z, -90.0), Report::default());
    let nudged = |x: f64, z: f64| expected + DQuat::from_xyzw(x, 0.0, z, 0.0);
    check_quat(&mut r, "exact", expected, expected, OZZ_TOL);
    check_quat(&mut r, "negated", -expected, expected, OZZ_TOL);
    check_quat(&mut r, "1.5e-3 off", nudged(1.5e-3, 0.0), expected, OZZ_TOL);
    assert!(r.0.is_empty(), "{:?}", r.0);

    // A component 3e-3 off, a rotation 1° off, a NaN, a quaternion not unit: each reported.
    check_quat(&mut r, "3e-3 off", nudged(0.0, 3e-3), expected, OZZ_TOL);
    check_quat(&mut r, "1 degree off", rot(Z, -89.0), expected, OZZ_TOL);
    check_quat(&mut r, "NaN", DQuat::from_xyzw(f64::NAN, 0.0, 0.0, 1.0), ID, OZZ_TOL);
    check_unit(&mut r, "not unit", DQuat::from_xyzw(0.0, 0.0, 0.0, 1.01));
    assert_eq!(r.0.len(), 4, "{:?}", r.0);
    // The report fails the test (its panic message, printed, is expected).
    assert!(std::panic::catch_unwind(|| r.finish("must fail")).is_err());

    // ozz's Weight case: its solution rebuilds the end on the target; 5° off at the start, not.
    let job = edit(ozz_two_bone(), |j| j.target = v(2.0, 0.0, 0.0));
    assert!(end_miss(&job, rot(Z, -90.0), rot(Z, 90.0)) < 1e-6);
    assert!(end_miss(&job, rot(Z, -85.0), rot(Z, 90.0)) > REACH_DISTANCE);

    // A wrong mid correction fails for both solvers (2); a wrong reach fails the flag and the
    // rebuilt end, for both (4).
    let mut r = Report::default();
    check_two_bone(&mut r, "wrong mid", &job, reached(rot(Z, -90.0), rot(Z, 45.0)));
    check_two_bone(&mut r, "wrong reach", &job, unreached(rot(Z, -90.0), rot(Z, 90.0)));
    assert_eq!(r.0.len(), 2 + 4, "{:?}", r.0);

    // ozz's aim Weight case: half its correction is not what it expects, nor does it aim.
    let (aim, mut r) = (edit(AIM, |j| j.target = Vec3::Z), Report::default());
    check(&mut r, "half aimed", &aim, aimed(rot(Y, -45.0)));
    assert_eq!(r.0.len(), 2, "{:?}", r.0);
    assert!(aim_miss(&aim, rot(Y, -90.0)).unwrap() < 1e-9);
    assert!(aim_miss(&aim, rot(Y, -45.0)).unwrap() > MISS_TOL);
}
