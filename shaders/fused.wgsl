// The whole frame in one dispatch: one workgroup per instance calls the clock, sample,
// local_to_model, ik (with IK chains) and palette stages' own functions (`advance_instance`,
// `sample_joints`, `propagate`, `ik_joints`, `palette_joints`) with the blend list and the pose kept in workgroup memory: the
// stages' storage accessors are overridden below, so per joint only the palette is written (and,
// on the frame before a transition that interrupts another, the snapshot pose). For skeletons of
// at most MAX_FUSED_JOINTS joints. CPU mirror: cpu::fused, the same steps in the same order.

#import wgpu_anim::types::{
    Affine, BlendList, BlendSample, FRAME_CULL, FRAME_LOD_INTERPOLATE, LayerApply, LocalPose, MARK_DRAWN,
    MARK_EVALUATE, MAX_FUSED_JOINTS, WORKGROUP_SIZE,
}
#import wgpu_anim::culling::{mark_evaluation, marks_of}
#import wgpu_anim::math::workgroup_linear
#import wgpu_anim::bindings::{frame, instances, local_poses}
#import wgpu_anim::clock::advance_instance
#import wgpu_anim::sample::{LayeredPose, sample_joints}
#import wgpu_anim::sample as sample_stage
#import wgpu_anim::local_to_model::propagate
#import wgpu_anim::local_to_model as local_to_model_stage
#import wgpu_anim::palette::{interpolate_joints, palette_joints, socket_matrices}
#import wgpu_anim::palette as palette_stage
#ifdef IK
#import wgpu_anim::ik::ik_joints
#import wgpu_anim::ik as ik_stage
#endif

// Local poses; after propagation, model matrices (an Affine's three rows in the same slots).
var<workgroup> wg_pose: array<LocalPose, MAX_FUSED_JOINTS>;
// Mesh-space additive deltas, and the original and modified model rotations (R, R').
var<workgroup> wg_delta: array<vec4<f32>, MAX_FUSED_JOINTS>;
var<workgroup> wg_r: array<vec4<f32>, MAX_FUSED_JOINTS>;
var<workgroup> wg_r_new: array<vec4<f32>, MAX_FUSED_JOINTS>;
// The instance's blend list, written by one thread and read by all: never in memory.
var<workgroup> wg_list: BlendList;
// The workgroup's character's marks this frame (Output.evaluate; evaluated and drawn without
// culling).
var<workgroup> wg_marks: u32;

// The sample stage's blend list, from workgroup memory (`i` is the workgroup's instance).
override fn sample_stage::list_count(i: u32) -> u32 {
    return wg_list.count;
}

override fn sample_stage::list_sample(i: u32, k: u32) -> BlendSample {
    return wg_list.samples[k];
}

override fn sample_stage::list_layer(i: u32, k: u32) -> LayerApply {
    return wg_list.layers[k];
}

override fn sample_stage::list_mesh_additive(i: u32) -> bool {
    return wg_list.mesh_additive != 0u;
}

override fn sample_stage::list_inertia(i: u32) -> u32 {
    return wg_list.inertia;
}

override fn sample_stage::list_inertia_time(i: u32) -> f32 {
    return wg_list.inertia_time;
}

// The sampled pose and delta stay in workgroup memory; only a kept snapshot goes to memory.
override fn sample_stage::store_joint(joint_offset: u32, j: u32, lp: LayeredPose, keep_pose: bool, mesh_additive: bool) {
    wg_pose[j] = lp.pose;
    wg_delta[j] = lp.mesh_delta;
    if (keep_pose) {
        local_poses[frame.snapshot_offset + joint_offset + j] = lp.pose;
    }
}

// The hierarchy walk, in place: joint j's local pose is read before its model matrix replaces it,
// and a parent's model matrix is written before its children read it.
override fn local_to_model_stage::local_at(joint_offset: u32, j: u32) -> LocalPose {
    return wg_pose[j];
}

override fn local_to_model_stage::model_at(joint_offset: u32, j: u32) -> Affine {
    let m = wg_pose[j];
    return Affine(m.translation, m.rotation, m.scale);
}

override fn local_to_model_stage::set_model(joint_offset: u32, j: u32, m: Affine) {
    wg_pose[j] = LocalPose(m.x, m.y, m.z);
}

override fn local_to_model_stage::mesh_delta_at(joint_offset: u32, j: u32) -> vec4<f32> {
    return wg_delta[j];
}

override fn local_to_model_stage::mesh_rotations_at(joint_offset: u32, j: u32) -> array<vec4<f32>, 2> {
    return array<vec4<f32>, 2>(wg_r[j], wg_r_new[j]);
}

override fn local_to_model_stage::set_mesh_rotations(joint_offset: u32, j: u32, r: vec4<f32>, d: vec4<f32>, r_new: vec4<f32>) {
    wg_r[j] = r;
    wg_r_new[j] = r_new;
}

#ifdef IK
override fn ik_stage::ik_model_at(joint_offset: u32, j: u32) -> Affine {
    let m = wg_pose[j];
    return Affine(m.translation, m.rotation, m.scale);
}

override fn ik_stage::ik_set_model(joint_offset: u32, j: u32, m: Affine) {
    wg_pose[j] = LocalPose(m.x, m.y, m.z);
}
#endif

override fn palette_stage::palette_model_at(joint_offset: u32, j: u32) -> Affine {
    let m = wg_pose[j];
    return Affine(m.translation, m.rotation, m.scale);
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn fused(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups);
    if (i >= frame.instance_count) {
        return;
    }
    let joint_count = min(instances[i].joint_count, MAX_FUSED_JOINTS);
    // clock: one thread; the blend list goes to workgroup memory only. With culling, the rest
    // only for a character marked for evaluation (shaders/shared/culling.wgsl; the cull pass
    // after this one lists them for the draw), or its palette interpolated.
    if (lid == 0u) {
        var list: BlendList;
        advance_instance(i, frame.dt, &list);
        wg_list = list;
        wg_marks = MARK_EVALUATE | MARK_DRAWN;
        if ((frame.flags & FRAME_CULL) != 0u) {
            _ = mark_evaluation(i, list.inertia, list.count, list.samples[0]);
            wg_marks = marks_of(i);
        }
    }
    // The clock wrote the instance's world (with root motion), which the socket matrices read,
    // and its marks, which the palette reads.
    storageBarrier();
    let marks = workgroupUniformLoad(&wg_marks);
    let interpolating = (frame.flags & FRAME_LOD_INTERPOLATE) != 0u;
    if ((marks & MARK_EVALUATE) == 0u) {
        if (interpolating && (marks & MARK_DRAWN) != 0u) {
            interpolate_joints(i, lid, joint_count);
        }
        return;
    }
    // sample and layers: threads over joints.
    sample_joints(i, lid, joint_count);
    workgroupBarrier();
    // local_to_model: one thread walks the joints parents first.
    if (lid == 0u) {
        propagate(i, joint_count);
    }
    workgroupBarrier();
#ifdef IK
    // ik: threads over joints (it ends on a barrier when it corrects anything).
    ik_joints(i, lid, joint_count);
#endif
    // palette: threads over joints; sockets: a thread each. Interpolating, only for a character
    // drawn (as the staged palette pass runs over the drawn ones).
    if (interpolating && (marks & MARK_DRAWN) == 0u) {
        return;
    }
    palette_joints(i, lid, joint_count);
    socket_matrices(i, lid);
}
