// Stage 3b: inverse kinematics on the propagated pose. For each chain of the instance's skeleton
// that has a goal, in order: thread 0 resolves the target and solves (shared/ik_solve.wgsl), as
// pivots `model[k] · R(c) · model[k]⁻¹`, one per corrected joint k, the child first; then every
// thread carries its joints by the pivots of the joints above them (ozz: multiply the local
// rotation, propagate again). Ground goals first lift the character onto the ground under its
// root and lower the pelvis to the lowest foot. Which chains reached their targets goes to the
// character's output (`ik_reached`). One workgroup per instance (with THREAD_PER_CHARACTER, per
// eight, one at a time). CPU mirror: cpu::ik.

#define_import_path wgpu_anim::ik

#import wgpu_anim::types::{
    Affine, IK_AIM, IK_ON, IK_TARGET_GROUND, IK_TARGET_LOOK_AT, IK_TARGET_WORLD, IK_TWO_BONE, IkChain,
    MAX_AIM_JOINTS, MAX_IK_CHAINS, NO_JOINT,
}
#import wgpu_anim::math::{CHARACTER_THREADS, CHARACTERS_PER_WORKGROUP, affine_from_sqt, affine_mul, quat_rotate, workgroup_linear}
#import wgpu_anim::culling::{evaluated_count, evaluated_instance}
#import wgpu_anim::bindings::{frame, instances, model_poses}
#import wgpu_anim::library::{ik_chain, joint_parent, skeleton_info}
#import wgpu_anim::ik_solve::{AimJob, TwoBoneJob, affine_inverse, aim_ik, transform_point, transform_vector, two_bone_ik}
#import wgpu_anim::ik_ground::ground_height
#import wgpu_anim::state::store_ik_reached

// What thread 0 hands the others: the instance's `ik` word, the pivots of the step and the joints
// they turn (NO_JOINT past the last), and the ground goals' targets (model space).
var<workgroup> wg_ik: u32;
var<workgroup> wg_pivots: array<Affine, MAX_AIM_JOINTS>;
var<workgroup> wg_pivot_joints: array<u32, MAX_AIM_JOINTS>;
var<workgroup> wg_ground: array<vec3<f32>, MAX_IK_CHAINS>;
// A translation of every joint (model space) before the pivots: the ground step's lift.
var<workgroup> wg_lift: vec3<f32>;
// The chains that reached their targets (bit k: chain k), written to the output at the end.
var<workgroup> wg_reached: u32;

virtual fn ik_model_at(joint_offset: u32, j: u32) -> Affine {
    // The staged pass works on the model pose buffer; the fused stage overrides these with
    // workgroup memory.
    return model_poses[joint_offset + j];
}

virtual fn ik_set_model(joint_offset: u32, j: u32, m: Affine) {
    model_poses[joint_offset + j] = m;
}

fn identity_affine() -> Affine {
    return Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));
}

// `m · R(q) · m⁻¹`: a correction q of the joint with model matrix m, in its own frame, as it moves
// the joint and everything below it. The identity where m has no inverse.
fn correction_pivot(m: Affine, q: vec4<f32>) -> Affine {
    let inv = affine_inverse(m);
    if (all(inv.x == vec4<f32>(0.0)) && all(inv.y == vec4<f32>(0.0)) && all(inv.z == vec4<f32>(0.0))) {
        return identity_affine();
    }
    return affine_mul(affine_mul(m, affine_from_sqt(vec3<f32>(0.0), q, vec3<f32>(1.0))), inv);
}

// `x`, or 0 where it is not finite (a ground function of the user's that returns NaN or infinity
// lifts and plants nothing rather than putting NaN in the pose).
fn finite_or_zero(x: f32) -> f32 {
    return select(0.0, x, abs(x) <= 3.4e38);
}

fn clear_pivots() {
    wg_lift = vec3<f32>(0.0);
    for (var p = 0u; p < MAX_AIM_JOINTS; p++) {
        wg_pivot_joints[p] = NO_JOINT;
    }
}

// The chain's target in model space (`world_inv`: the instance's model_from_world).
fn chain_target(i: u32, k: u32, kind: u32, world_inv: Affine) -> vec3<f32> {
    let goal = instances[i].ik_goals[k].xyz;
    if (kind == IK_TARGET_WORLD) {
        return transform_point(world_inv, goal);
    }
    if (kind == IK_TARGET_LOOK_AT) {
        return transform_point(world_inv, frame.look_at.xyz);
    }
    if (kind == IK_TARGET_GROUND) {
        return wg_ground[k];
    }
    return goal;
}

// Ground goals: the character stands on the ground under its root, every joint lifted by the
// ground's height there above its floor (its world origin's height), by the strongest ground
// goal's weight; each planted end's target is as high above the ground under it as the pose holds
// it above the floor; the pelvis goes down (a pivot) by the lowest such correction left below
// zero, each by its goal's weight. Thread 0.
fn ground_step(i: u32, skeleton: u32, joint_offset: u32, joint_count: u32, ik: u32, world_inv: Affine) {
    clear_pivots();
    let world = instances[i].world;
    let floor = world.y.w;
    let root_rise = finite_or_zero(ground_height(vec2<f32>(world.x.w, world.z.w)) - floor);
    var strongest = 0.0;
    var lowest = 0.0;
    var pelvis = NO_JOINT;
    for (var k = 0u; k < MAX_IK_CHAINS; k++) {
        let chain = ik_chain(skeleton, k);
        if ((ik & (IK_ON << k)) == 0u || ((ik >> (8u + 2u * k)) & 3u) != IK_TARGET_GROUND || chain.kind != IK_TWO_BONE || !chain_animated(chain, joint_count)) {
            continue;
        }
        let end_model = transform_point(ik_model_at(joint_offset, chain.joints.z), vec3<f32>(0.0));
        let end = transform_point(world, end_model);
        let rise = finite_or_zero(ground_height(end.xz) - floor);
        // In model space from the end itself: on flat ground the target is the end, exactly.
        wg_ground[k] = end_model + transform_vector(world_inv, vec3<f32>(0.0, rise, 0.0));
        let weight = instances[i].ik_goals[k].w;
        strongest = max(strongest, weight);
        lowest = min(lowest, (rise - root_rise) * weight);
        if (chain.pelvis != NO_JOINT) {
            pelvis = chain.pelvis;
        }
    }
    wg_lift = transform_vector(world_inv, vec3<f32>(0.0, root_rise * strongest, 0.0));
    if (pelvis != NO_JOINT && lowest < 0.0) {
        let t = transform_vector(world_inv, vec3<f32>(0.0, lowest, 0.0));
        wg_pivots[0] = Affine(vec4<f32>(1.0, 0.0, 0.0, t.x), vec4<f32>(0.0, 1.0, 0.0, t.y), vec4<f32>(0.0, 0.0, 1.0, t.z));
        wg_pivot_joints[0] = pelvis;
    }
}

// Whether every joint chain `chain` reads is among the `joint_count` animated (the fused pass
// animates at most MAX_FUSED_JOINTS): a chain reaching past them is left alone.
fn chain_animated(chain: IkChain, joint_count: u32) -> bool {
    if (chain.kind == IK_TWO_BONE) {
        let pelvis_ok = chain.pelvis == NO_JOINT || chain.pelvis < joint_count;
        return chain.joints.x < joint_count && chain.joints.y < joint_count && chain.joints.z < joint_count && pelvis_ok;
    }
    if (chain.kind == IK_AIM) {
        let n = min(chain.joint_count, MAX_AIM_JOINTS);
        for (var p = 0u; p < n; p++) {
            if (chain.joints[p] >= joint_count) {
                return false;
            }
        }
        return n > 0u;
    }
    return false;
}

// Chain k's pivots: a two-bone chain's mid then start; an aim chain's joints from the aiming one
// up, each aiming the forward, offset and up the ones before it turned (ozz's look-at), the last
// (the farthest) at the goal's whole weight, the others at `ratio` of it. Thread 0.
fn chain_step(i: u32, skeleton: u32, joint_offset: u32, joint_count: u32, k: u32, target_kind: u32, world_inv: Affine) {
    clear_pivots();
    let chain = ik_chain(skeleton, k);
    if (!chain_animated(chain, joint_count)) {
        return;
    }
    let goal = instances[i].ik_goals[k];
    let aim_at = chain_target(i, k, target_kind, world_inv);
    if (chain.kind == IK_TWO_BONE) {
        let start = ik_model_at(joint_offset, chain.joints.x);
        let mid = ik_model_at(joint_offset, chain.joints.y);
        let end = ik_model_at(joint_offset, chain.joints.z);
        let c = two_bone_ik(TwoBoneJob(start, mid, end, aim_at, chain.pole, chain.axis, chain.twist, chain.ratio, goal.w));
        wg_reached |= select(0u, 1u << k, c.reached);
        wg_pivots[0] = correction_pivot(mid, c.mid);
        wg_pivot_joints[0] = chain.joints.y;
        wg_pivots[1] = correction_pivot(start, c.start);
        wg_pivot_joints[1] = chain.joints.x;
    } else if (chain.kind == IK_AIM) {
        var forward = chain.axis;
        var offset = chain.offset;
        var up = chain.up;
        var previous = identity_affine();
        var turned = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        let n = min(chain.joint_count, MAX_AIM_JOINTS);
        var reached = true;
        for (var p = 0u; p < n; p++) {
            let j = chain.joints[p];
            let m = ik_model_at(joint_offset, j);
            if (p > 0u) {
                let inv = affine_inverse(m);
                let f = transform_vector(inv, transform_vector(previous, quat_rotate(turned, forward)));
                let f2 = dot(f, f);
                forward = select(vec3<f32>(0.0), f * inverseSqrt(f2), f2 > 0.0);
                offset = transform_point(inv, transform_point(previous, quat_rotate(turned, offset)));
                up = transform_vector(inv, transform_vector(previous, quat_rotate(turned, up)));
            }
            let share = select(chain.ratio, 1.0, p + 1u == n);
            let c = aim_ik(AimJob(m, aim_at, forward, offset, up, chain.pole, chain.twist, goal.w * share));
            reached = reached && c.reached;
            wg_pivots[p] = correction_pivot(m, c.rotation);
            wg_pivot_joints[p] = j;
            previous = m;
            turned = c.rotation;
        }
        wg_reached |= select(0u, 1u << k, reached);
    }
}

// Carries joints lid, lid + CHARACTER_THREADS, ... below `joint_count` by the lift, then by the
// pivots of the joints above them (or themselves), in the pivots' order. Every thread.
fn carry_joints(skel_joint_offset: u32, joint_offset: u32, lid: u32, joint_count: u32) {
    var lowest = NO_JOINT;
    for (var p = 0u; p < MAX_AIM_JOINTS; p++) {
        lowest = min(lowest, wg_pivot_joints[p]);
    }
    let lift = wg_lift;
    let lifted = any(lift != vec3<f32>(0.0));
    for (var j = lid; j < joint_count; j += CHARACTER_THREADS) {
        if (j < lowest && !lifted) {
            continue;
        }
        var m = ik_model_at(joint_offset, j);
        var moved = lifted;
        m.x.w += lift.x;
        m.y.w += lift.y;
        m.z.w += lift.z;
        // Which pivots' joints are j or above it: one walk up its ancestors.
        var below = array<bool, MAX_AIM_JOINTS>(false, false, false, false);
        var a = i32(j);
        while (lowest != NO_JOINT && a >= i32(lowest)) {
            for (var p = 0u; p < MAX_AIM_JOINTS; p++) {
                if (wg_pivot_joints[p] == u32(a)) {
                    below[p] = true;
                }
            }
            let parent = joint_parent(skel_joint_offset + u32(a));
            // The builder guarantees parents come first; anything else ends the walk.
            if (parent >= a) {
                break;
            }
            a = parent;
        }
        for (var p = 0u; p < MAX_AIM_JOINTS; p++) {
            if (below[p]) {
                m = affine_mul(wg_pivots[p], m);
                moved = true;
            }
        }
        if (moved) {
            ik_set_model(joint_offset, j, m);
        }
    }
}

// Instance i's IK, all threads of its workgroup: the ground step when a goal is on the ground,
// then each chain with a goal; the chains that reached their targets go to its output.
fn ik_joints(i: u32, lid: u32, joint_count: u32) {
    if (lid == 0u) {
        wg_ik = instances[i].ik;
        wg_reached = 0u;
    }
    let ik = workgroupUniformLoad(&wg_ik);
    if (ik == 0u) {
        if (lid == 0u) {
            store_ik_reached(i, 0u);
        }
        return;
    }
    let skeleton = instances[i].skeleton;
    let skel_joint_offset = skeleton_info(skeleton).joint_offset;
    let joint_offset = instances[i].joint_offset;
    let world_inv = affine_inverse(instances[i].world);
    var grounded = false;
    for (var k = 0u; k < MAX_IK_CHAINS; k++) {
        grounded = grounded || ((ik & (IK_ON << k)) != 0u && ((ik >> (8u + 2u * k)) & 3u) == IK_TARGET_GROUND);
    }
    if (grounded) {
        if (lid == 0u) {
            ground_step(i, skeleton, joint_offset, joint_count, ik, world_inv);
        }
        workgroupBarrier();
        carry_joints(skel_joint_offset, joint_offset, lid, joint_count);
        // The staged pass's model poses are storage: the next step reads what others wrote.
        storageBarrier();
        workgroupBarrier();
    }
    for (var k = 0u; k < MAX_IK_CHAINS; k++) {
        if ((ik & (IK_ON << k)) == 0u) {
            continue;
        }
        if (lid == 0u) {
            chain_step(i, skeleton, joint_offset, joint_count, k, (ik >> (8u + 2u * k)) & 3u, world_inv);
        }
        workgroupBarrier();
        carry_joints(skel_joint_offset, joint_offset, lid, joint_count);
        storageBarrier();
        workgroupBarrier();
    }
    if (lid == 0u) {
        store_ik_reached(i, wg_reached);
    }
}

@compute @workgroup_size(CHARACTER_THREADS)
fn ik(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // With culling, the k-th listed instance (shaders/shared/culling.wgsl). A workgroup works on
    // as many characters as the sample and palette passes' (CHARACTERS_PER_WORKGROUP: with
    // THREAD_PER_CHARACTER, eight), all its threads on one at a time: a step waits on the others.
    for (var c = 0u; c < CHARACTERS_PER_WORKGROUP; c++) {
        let k = workgroup_linear(wg, groups) * CHARACTERS_PER_WORKGROUP + c;
        if (k >= evaluated_count()) {
            return;
        }
        let i = evaluated_instance(k);
        ik_joints(i, lid, instances[i].joint_count);
    }
}
