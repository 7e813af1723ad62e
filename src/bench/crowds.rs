//! The bench's crowds of built-in mannequins ([`crowd`] and its variants): one per workload,
//! clip format, skinning and way of running a character, the same characters in the same order
//! whatever the size.

use super::*;
use crate::gpu::Controller;

/// A crowd of `n` mannequins for `workload`, its clips in `format`, each character at its own
/// clip or velocity, phase and rate; the first `k` characters of any crowd of one workload are the
/// same. Uploaded (`prepare` called with `dt` 0), no frame run yet, except for the
/// `state-machine` workload's, which has played [`machine::SETTLE_FRAMES`] frames.
///
/// Errors: the animator's limits (capacity, buffer sizes).
pub fn crowd(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    workload: Workload,
    format: ClipFormat,
) -> Result<Animator> {
    crowd_skinned(device, queue, n, workload, format, Skinning::Linear)
}

/// As [`crowd`], every character skinned as `skinning` says (an animator that keeps dual
/// quaternions unless it is linear).
///
/// Errors: as [`crowd`].
pub fn crowd_skinned(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    workload: Workload,
    format: ClipFormat,
    skinning: Skinning,
) -> Result<Animator> {
    let options = CrowdOptions {
        skinning,
        morph: workload == Workload::Morph,
        threads: CharacterThreads::Auto,
    };
    crowd_with(device, queue, n, workload, format, options)
}

/// As [`crowd`], with `threads` per character in the passes that run a workgroup per character
/// ([`crate::gpu::AnimatorDesc::character_threads`]).
///
/// Errors: as [`crowd`].
pub fn crowd_threads(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    workload: Workload,
    format: ClipFormat,
    threads: CharacterThreads,
) -> Result<Animator> {
    let options = CrowdOptions {
        skinning: Skinning::Linear,
        morph: workload == Workload::Morph,
        threads,
    };
    crowd_with(device, queue, n, workload, format, options)
}

/// One workload and crowd size run one way ([`CharacterThreads`]): what a paired comparison
/// ([`compare_formats`], [`compare_paths`]) measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PairedSet {
    /// The workload.
    pub workload: Workload,
    /// Characters in the crowd.
    pub characters: u32,
    /// Threads per character.
    pub threads: CharacterThreads,
}

/// How [`crowd_with`] makes its crowd beyond the workload.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CrowdOptions {
    /// How every character is skinned (an animator that keeps dual quaternions unless linear).
    pub(crate) skinning: Skinning,
    /// The gaits breathe and every character holds the expression target.
    pub(crate) morph: bool,
    /// Threads per character.
    pub(crate) threads: CharacterThreads,
}

/// The ways of running a character that `config` asks for on `device`
/// ([`Config::character_threads`]; empty: [`CharacterThreads::One`] and
/// [`CharacterThreads::Narrow`] on a CPU adapter, where the first is the default and the second
/// is nearer to what a GPU runs; [`CharacterThreads::Auto`] on a GPU).
#[must_use]
pub fn threads_to_run(device: &wgpu::Device, config: &Config) -> Vec<CharacterThreads> {
    if !config.character_threads.is_empty() {
        config.character_threads.clone()
    } else if is_cpu_adapter(device) {
        vec![CharacterThreads::One, CharacterThreads::Narrow]
    } else {
        vec![CharacterThreads::Auto]
    }
}

/// As [`crowd_skinned`]; with `morph`, the gaits breathe (a morph-weight track each, blended on
/// the GPU: [`mannequin::library_breathing_in`]) and every character holds the mannequin's
/// expression target at a weight of its own, so that both its targets are in use.
pub(crate) fn crowd_with(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    n: u32,
    workload: Workload,
    format: ClipFormat,
    CrowdOptions {
        skinning,
        morph,
        threads,
    }: CrowdOptions,
) -> Result<Animator> {
    let (mut state_machine, mut chains, mut retargeted) = (None, None, None);
    let (lib, clips) = if morph {
        let (lib, _, clips) = mannequin::library_breathing_in(format);
        (lib, clips)
    } else if workload == Workload::Ik {
        let (lib, _, clips, c) = mannequin::library_with_ik_in(format)?;
        chains = Some(c);
        (lib, clips)
    } else if workload == Workload::Retarget {
        let (lib, clips, target) = super::retarget::library_in(format)?;
        retargeted = Some(target);
        (lib, clips)
    } else if workload == Workload::StateMachine {
        let (lib, id, clips) = machine::library_in(format)?;
        state_machine = Some(id);
        (lib, clips)
    } else {
        let (lib, _, clips) = mannequin::library_in(format);
        (lib, clips)
    };
    let mut a = Animator::new(
        device,
        &lib,
        &AnimatorDesc {
            max_instances: n,
            max_joints: None,
            page_instances: None,
            dual_quaternion: skinning != Skinning::Linear,
            morph_weights: if morph { 2 } else { 0 },
            ground: None,
            inertialization: false,
            // Only the layered workload plays layers: the others' passes leave their code out,
            // as an application without layers would have them.
            layers: workload == Workload::Layered,
            culling: false,
            lod_interpolation: false,
            hierarchy_walk: crate::gpu::HierarchyWalk::Auto,
            character_threads: threads,
        },
    )?;
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION).ok_or_else(|| Error::Limit {
        what: "the built-in library has no locomotion tree".into(),
    })?;
    for i in 0..n {
        let clip = clips[i as usize % clips.len()];
        let (u, v) = ((i as f32 * 0.618).fract(), (i as f32 * 0.377).fract());
        let velocity = glam::Vec2::from_angle(u * std::f32::consts::TAU) * v * 3.5;
        let desc = match workload {
            Workload::SingleClip | Workload::Morph | Workload::Ik | Workload::StateMachine | Workload::Retarget => {
                InstanceDesc {
                    skinning,
                    time: u * 3.0,
                    rate: 0.8 + v * 0.4,
                    skeleton: retargeted,
                    ..InstanceDesc::new(clip)
                }
            }
            Workload::SingleClipRandom => InstanceDesc {
                skinning,
                time: u * 3.0,
                rate: 20.0 + v * 10.0,
                ..InstanceDesc::new(clip)
            },
            Workload::Locomotion2d | Workload::Layered => InstanceDesc {
                skinning,
                time: u,
                ..InstanceDesc::tree(tree, [velocity.x, velocity.y, 2.0 * v - 1.0, u - 0.5])
            },
        };
        let controller = a.controller_mut();
        let index = controller.add_instance(&desc)?;
        if morph {
            controller.set_morph_weights(index, &[0.0, 0.5 + 0.5 * v])?;
        }
        if workload == Workload::Layered {
            add_layers(controller, &lib, index, u)?;
        }
        if let Some(id) = state_machine {
            machine::follow(controller, index, id, i as usize % clips.len())?;
        }
        if let Some([leg_l, leg_r, look]) = chains {
            use crate::ik::{IkGoal, IkTarget};
            let planted = IkGoal {
                target: IkTarget::Ground,
                weight: 1.0,
            };
            controller.set_ik_goal(index, leg_l, Some(planted))?;
            controller.set_ik_goal(index, leg_r, Some(planted))?;
            let looking = IkGoal {
                target: IkTarget::LookAt,
                weight: 1.0,
            };
            controller.set_ik_goal(index, look, Some(looking))?;
        }
        if matches!(workload, Workload::Locomotion2d | Workload::Layered) && i % 4 == 0 {
            // A long cross-fade from the locomotion blend to idle, running throughout the bench.
            controller.play(i as usize, &InstanceDesc::new(clips[0]), Some(Transition::linear(1e6)))?;
        }
    }
    if chains.is_some() {
        a.controller_mut().set_look_at(glam::Vec3::new(0.0, 1.6, 4.0))?;
    }
    a.prepare(queue, 0.0);
    if state_machine.is_some() {
        // Out of the entry state into the state each character's parameters decide, without
        // the per-frame changes.
        for _ in 0..machine::SETTLE_FRAMES {
            gpu::plain_frame(device, queue, &mut a)?;
        }
    }
    Ok(a)
}

/// The layered workload's layers on instance `index`: the arm held forward (override, right-arm
/// mask), a looping flinch (local additive) and the aim offset (mesh-space additive).
fn add_layers(controller: &mut Controller, lib: &AnimationLibrary, index: usize, phase: f32) -> Result<()> {
    use crate::gpu::{Layer, LayerMode};
    use crate::mannequin::layer_assets;
    let missing = |what: &str| Error::Limit {
        what: format!("the built-in library has no {what}"),
    };
    let skeleton = lib
        .skeleton_at(controller.instance(index).map_or(0, |i| i.skeleton))
        .ok_or_else(|| missing("skeleton"))?;
    let clip = |name: &str| lib.clip_id(skeleton, name).map_err(|_| missing(name));
    let arm = Layer {
        mask: Some(
            lib.mask_id(layer_assets::RIGHT_ARM)
                .ok_or_else(|| missing("right-arm mask"))?,
        ),
        ..Layer::clip(LayerMode::Override, clip(layer_assets::AIM_POSE)?)
    };
    let flinch = Layer {
        start: phase * 0.6,
        weight: 0.8,
        ..Layer::clip(LayerMode::AdditiveLocal, clip(layer_assets::FLINCH)?)
    };
    let aim = lib
        .blend()
        .tree_id(layer_assets::AIM_OFFSET)
        .ok_or_else(|| missing("aim offset"))?;
    controller.set_layer(index, 0, Some(&arm), false)?;
    controller.set_layer(index, 1, Some(&flinch), false)?;
    controller.set_layer(index, 2, Some(&Layer::tree(LayerMode::AdditiveMesh, aim)), false)
}
