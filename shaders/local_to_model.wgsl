// Stage 3: propagate the hierarchy, parents before children:
// model[j] = model[parent[j]] * local[j]. One thread per instance walks its joints in order.
// CPU mirror: cpu::local_to_model.

#define_import_path wgpu_anim::local_to_model

#import wgpu_anim::types::{Affine, LAYER_MESH, LocalPose, MAX_LAYERS, WORKGROUP_SIZE}
#import wgpu_anim::math::{affine_from_sqt, affine_mul, quat_conjugate, quat_mul, workgroup_linear}
#import wgpu_anim::culling::{evaluated_count, evaluated_instance}
#import wgpu_anim::bindings::{frame, instances, local_poses, model_poses}
#import wgpu_anim::library::{joint_parent, skeleton_info}

// Model-space matrix of a joint from its parent's model matrix and its local pose.
fn joint_model(parent_model: Affine, has_parent: bool, local: LocalPose) -> Affine {
    let m = affine_from_sqt(local.translation.xyz, local.rotation, local.scale.xyz);
    if (has_parent) {
        return affine_mul(parent_model, m);
    }
    return m;
}

// Whether instance `i` has a mesh-space additive layer that is on.
// Without layers (NO_LAYERS, shaders/sample.wgsl), never.
fn has_mesh_layer(i: u32) -> bool {
#ifdef NO_LAYERS
    return false;
#else
    return (instances[i].flags & (LAYER_MESH * ((1u << MAX_LAYERS) - 1u))) != 0u;
#endif
}

virtual fn local_at(joint_offset: u32, j: u32) -> LocalPose {
    // Where the walk reads local poses and keeps model matrices and mesh-space rotations: the
    // staged pass uses the local and model pose buffers (the mesh-space scratch slot keeps R_j in
    // `translation`, D_j in `rotation`, R'_j in `scale`); the fused stage overrides these with
    // workgroup memory.
    return local_poses[joint_offset + j];
}

virtual fn model_at(joint_offset: u32, j: u32) -> Affine {
    return model_poses[joint_offset + j];
}

virtual fn set_model(joint_offset: u32, j: u32, m: Affine) {
    model_poses[joint_offset + j] = m;
}

virtual fn mesh_delta_at(joint_offset: u32, j: u32) -> vec4<f32> {
    return local_poses[frame.snapshot_offset + joint_offset + j].rotation;
}

virtual fn mesh_rotations_at(joint_offset: u32, j: u32) -> array<vec4<f32>, 2> {
    // (R_j, R'_j) of joint `j`.
    let s = local_poses[frame.snapshot_offset + joint_offset + j];
    return array<vec4<f32>, 2>(s.translation, s.scale);
}

virtual fn set_mesh_rotations(joint_offset: u32, j: u32, r: vec4<f32>, d: vec4<f32>, r_new: vec4<f32>) {
    local_poses[frame.snapshot_offset + joint_offset + j] = LocalPose(r, d, r_new);
}

// Joint `j` of the character whose joints start at `joint_offset` (its skeleton's at
// `skeleton_joints`): model[j] = model[parent] * local[j], with mesh-space additive layers applied
// when `mesh`. Its parent's model matrix (and mesh-space rotations) must be there already.
fn propagate_joint(joint_offset: u32, skeleton_joints: u32, mesh: bool, j: u32) {
    let p = joint_parent(skeleton_joints + j);
    // The builder guarantees p < j; anything else is treated as a root, never read ahead.
    let has_parent = p >= 0 && u32(p) < j;
    var parent_model = Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));
    if (has_parent) {
        parent_model = model_at(joint_offset, u32(p));
    }
    var local = local_at(joint_offset, j);
    if (mesh) {
        // Mesh-space additive: with R the model rotation the base pose gives (R_j = R_parent
        // q_j) and D_j the joint's delta, R'_j = D_j R_j, and the new local rotation is
        // R'_parent⁻¹ R'_j.
        let d = mesh_delta_at(joint_offset, j);
        var r = local.rotation;
        var r_parent_new = vec4<f32>(0.0, 0.0, 0.0, 1.0);
        if (has_parent) {
            let ps = mesh_rotations_at(joint_offset, u32(p));
            r = quat_mul(ps[0], local.rotation);
            r_parent_new = ps[1];
        }
        let r_new = normalize(quat_mul(d, r));
        local.rotation = normalize(quat_mul(quat_conjugate(r_parent_new), r_new));
        set_mesh_rotations(joint_offset, j, r, d, r_new);
    }
    set_model(joint_offset, j, joint_model(parent_model, has_parent, local));
}

// Walks instance `i`'s first `joint_count` joints parents first: model[j] = model[parent] *
// local[j], with mesh-space additive layers applied on the way.
fn propagate(i: u32, joint_count: u32) {
    let joint_offset = instances[i].joint_offset;
    let skeleton_joints = skeleton_info(instances[i].skeleton).joint_offset;
    let mesh = has_mesh_layer(i);
    for (var j = 0u; j < joint_count; j++) {
        propagate_joint(joint_offset, skeleton_joints, mesh, j);
    }
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn local_to_model(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    // With culling, the k-th listed instance (shaders/shared/culling.wgsl).
    let k = workgroup_linear(wg, groups) * WORKGROUP_SIZE + lid;
    if (k >= evaluated_count()) {
        return;
    }
    let i = evaluated_instance(k);
    propagate(i, instances[i].joint_count);
}
