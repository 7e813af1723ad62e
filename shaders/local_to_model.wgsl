// Stage 3: propagate the hierarchy, parents before children:
// model[j] = model[parent[j]] * local[j]. One thread per instance walks its joints in order.
// CPU mirror: cpu::local_to_model.

// Model-space matrix of a joint from its parent's model matrix and its local pose.
fn joint_model(parent_model: Affine, has_parent: bool, local: LocalPose) -> Affine {
    let m = affine_from_sqt(local.translation.xyz, local.rotation, local.scale.xyz);
    if (has_parent) {
        return affine_mul(parent_model, m);
    }
    return m;
}

// Whether instance `i` has a mesh-space additive layer that is on.
fn has_mesh_layer(i: u32) -> bool {
    return (instances[i].flags & (LAYER_MESH * ((1u << MAX_LAYERS) - 1u))) != 0u;
}

@compute @workgroup_size(WORKGROUP_SIZE)
fn local_to_model(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let i = workgroup_linear(wg, groups) * WORKGROUP_SIZE + lid;
    if (i >= frame.instance_count) {
        return;
    }
    let joint_offset = instances[i].joint_offset;
    let skel = skeleton_info(instances[i].skeleton);
    let mesh = has_mesh_layer(i);
    for (var j = 0u; j < instances[i].joint_count; j++) {
        let p = joint_parent(skel.joint_offset + j);
        // The builder guarantees p < j; anything else is treated as a root, never read ahead.
        let has_parent = p >= 0 && u32(p) < j;
        var parent_model = Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));
        if (has_parent) {
            parent_model = model_poses[joint_offset + u32(p)];
        }
        var local = local_poses[joint_offset + j];
        if (mesh) {
            // Mesh-space additive: with R the model rotation the base pose gives (R_j = R_parent
            // q_j) and D_j the joint's delta, R'_j = D_j R_j, and the new local rotation is
            // R'_parent⁻¹ R'_j. The scratch slot keeps R_j (in `translation`) and R'_j (in `scale`)
            // for the children.
            let scratch = 2u * frame.snapshot_offset + joint_offset;
            let d = local_poses[scratch + j].rotation;
            var r = local.rotation;
            var r_parent_new = vec4<f32>(0.0, 0.0, 0.0, 1.0);
            if (has_parent) {
                let ps = local_poses[scratch + u32(p)];
                r = quat_mul(ps.translation, local.rotation);
                r_parent_new = ps.scale;
            }
            let r_new = normalize(quat_mul(d, r));
            local.rotation = normalize(quat_mul(quat_conjugate(r_parent_new), r_new));
            local_poses[scratch + j] = LocalPose(r, d, r_new);
        }
        model_poses[joint_offset + j] = joint_model(parent_model, has_parent, local);
    }
}
