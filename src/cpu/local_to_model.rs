//! Mirror of `shaders/local_to_model.wgsl`.

use crate::layout::{GpuFrame, GpuInstance, LocalPose};
use crate::library::AnimationLibrary;
use crate::math::Affine;

/// Model-space matrix of a joint from its parent's and its local pose. WGSL `joint_model`.
#[must_use]
pub fn joint_model(parent_model: &Affine, has_parent: bool, local: &LocalPose) -> Affine {
    let m = Affine::from_sqt(
        local.translation.truncate(),
        glam::Quat::from_vec4(local.rotation),
        local.scale.truncate(),
    );
    if has_parent {
        return parent_model.mul(&m);
    }
    m
}

/// Stage `local_to_model`: one invocation per instance walks its joints parents-first.
#[expect(clippy::needless_range_loop, reason = "keeps the code comparable to the shader")]
pub fn local_to_model(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    local: &[LocalPose],
    model: &mut [Affine],
) {
    for i in 0..frame.instance_count as usize {
        let inst = &instances[i];
        let skel = &lib.gpu_skeletons[inst.skeleton as usize];
        for j in 0..inst.joint_count {
            let p = lib.parents[(skel.joint_offset + j) as usize];
            let has_parent = p >= 0 && (p as u32) < j;
            let mut parent_model = Affine::IDENTITY;
            if has_parent {
                parent_model = model[(inst.joint_offset + p as u32) as usize];
            }
            model[(inst.joint_offset + j) as usize] =
                joint_model(&parent_model, has_parent, &local[(inst.joint_offset + j) as usize]);
        }
    }
}
