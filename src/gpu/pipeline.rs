//! The animator's compute pipelines: each stage's, built from the shader variant its library
//! needs, refused by the device as an error naming the stage.

use super::page::StagePipeline;
use super::wgpu_util::{pipeline_layout, wgsl_module};
use super::{CharacterThreads, GpuLibrary};
use crate::error::{Error, Result};
use crate::shaders::{Stage, library_defs, stage_variant};

/// The define of [`CharacterThreads::One`]'s shaders.
pub(super) const THREAD_PER_CHARACTER: &str = "THREAD_PER_CHARACTER";

/// The pipeline of `stage` for `gpu_library` (its shader variant, [`library_defs`]): a stage the
/// device refuses (beyond its limits) is an error naming the stage.
pub(super) async fn stage_pipeline(
    device: &wgpu::Device,
    gpu_library: &GpuLibrary,
    stage: Stage,
    ground: Option<&str>,
    extra_defs: &[crate::shaders::ShaderDef],
) -> Result<StagePipeline> {
    // The variant the library needs (shaders::library_defs), with `extra_defs`; a ground that
    // does not compose is the caller's error, found before the device is asked.
    let mut defs = library_defs(gpu_library.library());
    defs.extend_from_slice(extra_defs);
    let one_thread_each = defs.iter().any(|(name, _)| *name == THREAD_PER_CHARACTER);
    let per_character = matches!(stage, Stage::Sample | Stage::Ik | Stage::Palette | Stage::Fused);
    let characters_per_workgroup = if one_thread_each && per_character {
        CharacterThreads::One.characters_per_workgroup()
    } else {
        1
    };
    let variant = stage_variant(stage, &defs, ground).map_err(|e| Error::Limit {
        what: format!(
            "the {} stage does not compose with AnimatorDesc::ground: {e}",
            stage.name()
        ),
    })?;
    super::refusable(
        device,
        || format!("the {} pipeline", stage.name()),
        || {
            // What this variant uses, no more: a binding it never reads costs every dispatch.
            let entries = crate::shaders::layout_entries_of(&variant.bindings);
            let label = format!("wgpu-anim {}", stage.name());
            let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
                label: Some(&label),
                entries: &entries,
            });
            let module = wgsl_module(device, &label, &variant.source);
            let pipeline_layout = pipeline_layout(device, &label, &layout);
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(&label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(stage.name()),
                compilation_options: Default::default(),
                cache: None,
            });
            StagePipeline {
                stage,
                bindings: variant.bindings.clone(),
                layout,
                pipeline,
                characters_per_workgroup,
            }
        },
    )
    .await
}
