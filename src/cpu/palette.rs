//! Mirror of `shaders/palette.wgsl`.

use crate::layout::{GpuFrame, GpuInstance, WORKGROUP_SIZE};
use crate::library::AnimationLibrary;
use crate::math::Affine;

/// `model * inverse_bind`. WGSL `skin_matrix`.
#[must_use]
pub fn skin_matrix(model: &Affine, inverse_bind: &Affine) -> Affine {
    model.mul(inverse_bind)
}

/// Stage `palette`: one workgroup per instance, its threads striding over the joints.
pub fn palette(
    lib: &AnimationLibrary,
    frame: &GpuFrame,
    instances: &[GpuInstance],
    model: &[Affine],
    palettes: &mut [Affine],
) {
    for inst in &instances[..frame.instance_count as usize] {
        let skel = &lib.gpu_skeletons[inst.skeleton as usize];
        for lid in 0..WORKGROUP_SIZE {
            let mut j = lid;
            while j < inst.joint_count {
                palettes[(inst.joint_offset + j) as usize] = skin_matrix(
                    &model[(inst.joint_offset + j) as usize],
                    &lib.inverse_binds[(skel.joint_offset + j) as usize],
                );
                j += WORKGROUP_SIZE;
            }
        }
    }
}
