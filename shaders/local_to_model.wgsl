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
    let inst = instances[i];
    let skel = skeletons[inst.skeleton];
    for (var j = 0u; j < inst.joint_count; j++) {
        let p = parents[skel.joint_offset + j];
        // The builder guarantees p < j; anything else is treated as a root, never read ahead.
        let has_parent = p >= 0 && u32(p) < j;
        var parent_model = Affine(vec4<f32>(1.0, 0.0, 0.0, 0.0), vec4<f32>(0.0, 1.0, 0.0, 0.0), vec4<f32>(0.0, 0.0, 1.0, 0.0));
        if (has_parent) {
            parent_model = model_poses[inst.joint_offset + u32(p)];
        }
        model_poses[inst.joint_offset + j] = joint_model(parent_model, has_parent, local_poses[inst.joint_offset + j]);
    }
}
