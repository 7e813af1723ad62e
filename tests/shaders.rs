//! Every WGSL module parses and validates with naga, and every Rust struct shared with WGSL has the
//! size and field offsets naga computes for the WGSL struct.

use wgpu_anim::layout::{
    BlendList, BlendSample, GpuBlendChild, GpuBlendNode, GpuBlendTree, GpuClip, GpuClock, GpuFrame, GpuInstance,
    GpuLayer, GpuLayerDef, GpuSkeleton, GpuTrack, LayerApply, LocalPose, WORKGROUP_SIZE,
};
use wgpu_anim::math::Affine;
use wgpu_anim::shaders::{self, Stage};

fn struct_layout(module: &naga::Module, name: &str) -> (u32, Vec<(String, u32)>) {
    for (_, ty) in module.types.iter() {
        if ty.name.as_deref() == Some(name) {
            if let naga::TypeInner::Struct { members, span } = &ty.inner {
                return (
                    *span,
                    members
                        .iter()
                        .map(|m| (m.name.clone().unwrap_or_default(), m.offset))
                        .collect(),
                );
            }
        }
    }
    panic!("WGSL struct {name} not found");
}

#[test]
fn every_stage_module_validates() {
    for stage in Stage::ALL {
        let src = shaders::stage_source(stage);
        let (module, _) = shaders::validate(&src).unwrap_or_else(|e| panic!("{}: {e}", stage.name()));
        let has_entry = module.entry_points.iter().any(|e| e.name == stage.name());
        assert!(has_entry, "{} has no entry point of its own name", stage.name());
    }
}

/// The globals an entry point of a stage's module reads or writes, by name.
fn globals_used(stage: Stage) -> Vec<(String, naga::valid::GlobalUse)> {
    let (module, info) = shaders::validate(&shaders::stage_source(stage)).unwrap();
    let index = module.entry_points.iter().position(|e| e.name == stage.name()).unwrap();
    let ep = info.get_entry_point(index);
    module
        .global_variables
        .iter()
        .filter(|(h, _)| !ep[*h].is_empty())
        .map(|(h, g)| (g.name.clone().unwrap_or_default(), ep[h]))
        .collect()
}

#[test]
fn the_fused_stage_keeps_blend_lists_and_poses_out_of_memory() {
    use naga::valid::GlobalUse;
    let fused = globals_used(Stage::Fused);
    let uses = |name: &str| fused.iter().find(|(n, _)| n == name).map(|(_, u)| *u);
    // Blend lists and model matrices never leave workgroup memory; local poses are written (and
    // read) only as snapshots.
    assert_eq!(uses("blend_lists"), None);
    assert_eq!(uses("model_poses"), None);
    assert!(uses("wg_list").is_some() && uses("wg_pose").is_some());
    assert!(uses("palettes").unwrap().contains(GlobalUse::WRITE));
    // The staged sample stage reads the list where clock wrote it.
    let sample = globals_used(Stage::Sample);
    assert!(
        sample
            .iter()
            .any(|(n, u)| n == "blend_lists" && u.contains(GlobalUse::READ))
    );
    assert!(!sample.iter().any(|(n, _)| n == "wg_list"));
}

/// Each animation stage's binding table is exactly what its entry point uses: every bound
/// resource is used, every used resource is bound, read-write only where the stage writes.
#[test]
fn every_stage_binds_what_it_uses_read_only_where_it_only_reads() {
    use naga::valid::GlobalUse;
    use wgpu_anim::shaders::{Access, Resource};
    for stage in Stage::ALL.into_iter().filter(|&s| s != Stage::Skin) {
        let used = globals_used(stage);
        for &(resource, access) in stage.bindings() {
            let (_, u) = used
                .iter()
                .find(|(n, _)| n == resource.name())
                .unwrap_or_else(|| panic!("{}: binds {} but does not use it", stage.name(), resource.name()));
            let writes = u.contains(GlobalUse::WRITE);
            assert_eq!(
                access == Access::ReadWrite,
                writes,
                "{}: {} is bound {access:?} and {}written",
                stage.name(),
                resource.name(),
                if writes { "" } else { "never " }
            );
        }
        for (name, _) in &used {
            let is_resource = Resource::ALL.iter().any(|r| r.name() == name);
            if is_resource {
                assert!(
                    stage.bindings().iter().any(|(r, _)| r.name() == name),
                    "{}: uses {name} without binding it",
                    stage.name()
                );
            }
        }
    }
}

/// Every animation pipeline fits WebGPU's default limits (`wgpu::Limits::default()`) with
/// storage slots to spare; the GPU tests run on a device with exactly those limits.
#[test]
fn every_stage_fits_webgpu_default_limits_with_slots_to_spare() {
    let limits = wgpu::Limits::default();
    for stage in Stage::ALL {
        let storage = stage.storage_buffers();
        let uniforms = stage.bindings().len() as u32 - storage;
        eprintln!("{}: {storage} storage buffers, {uniforms} uniforms", stage.name());
        assert!(
            storage + wgpu_anim::shaders::STORAGE_SLOTS_SPARE <= limits.max_storage_buffers_per_shader_stage,
            "{}: {storage} storage buffers leave fewer than {} of {} free",
            stage.name(),
            wgpu_anim::shaders::STORAGE_SLOTS_SPARE,
            limits.max_storage_buffers_per_shader_stage
        );
        assert!(uniforms <= limits.max_uniform_buffers_per_shader_stage);
        assert!(stage.bindings().len() as u32 <= limits.max_bindings_per_bind_group);
    }
    let layer_defs = u64::from(wgpu_anim::layout::MAX_LAYER_DEFS) * size_of::<wgpu_anim::layout::GpuLayerDef>() as u64;
    assert!(layer_defs <= limits.max_uniform_buffer_binding_size);
    // The fused stage's workgroup memory, as naga lays it out.
    let (module, _) = shaders::validate(&shaders::stage_source(Stage::Fused)).unwrap();
    let workgroup: u32 = module
        .global_variables
        .iter()
        .filter(|(_, g)| g.space == naga::AddressSpace::WorkGroup)
        .map(|(_, g)| {
            let mut layouter = naga::proc::Layouter::default();
            layouter.update(module.to_ctx()).unwrap();
            layouter[g.ty].size
        })
        .sum();
    assert!(
        workgroup <= limits.max_compute_workgroup_storage_size,
        "fused: {workgroup} bytes of workgroup memory"
    );
}

#[test]
fn the_ground_shader_validates() {
    shaders::validate(shaders::GROUND).unwrap();
}

#[test]
fn skin_functions_validate_in_a_user_module() {
    let user = format!(
        "{}\n@group(2) @binding(0) var<storage, read> palettes: array<Affine>;\n\
         @vertex fn main(@location(0) p: vec3<f32>, @location(1) j: vec4<u32>, @location(2) w: vec4<f32>) -> @builtin(position) vec4<f32> {{\n\
           let s = skin_vertex(0u, j, w, p, vec3<f32>(0.0, 1.0, 0.0));\n  return vec4<f32>(s.position, 1.0);\n}}\n",
        shaders::SKIN_FUNCTIONS
    );
    shaders::validate(&user).unwrap();
}

#[test]
fn blend_weights_validate_in_a_module_declaring_the_library() {
    let module = format!(
        "{}\n{}\n{}\n{}\n{}\n\
         @group(1) @binding(0) var<storage, read_write> blend_out: array<f32>;\n\
         @compute @workgroup_size(64) fn main(@builtin(global_invocation_id) id: vec3<u32>) {{\n\
           var w = node_child_weights(blend_node(id.x), vec4<f32>(0.5, -0.25, 1.0, 0.0));\n\
           for (var i = 0u; i < 16u; i++) {{ blend_out[id.x * 16u + i] = w[i]; }}\n\
         }}\n",
        shaders::TYPES,
        shaders::MATH,
        shaders::bindings_wgsl(Stage::Clock),
        shaders::LIBRARY,
        shaders::BLEND_WEIGHTS
    );
    let (module, _) = shaders::validate(&module).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        module
            .functions
            .iter()
            .any(|(_, f)| f.name.as_deref() == Some("node_child_weights"))
    );
}

#[test]
fn a_broken_shader_is_reported() {
    let broken = shaders::stage_source(Stage::Sample).replace("fn sample_joint", "fn sample_joint(");
    assert!(shaders::validate(&broken).is_err());
}

#[test]
fn rust_structs_match_naga_layouts() {
    let (module, _) = shaders::validate(&shaders::stage_source(Stage::Sample)).unwrap();
    let check = |name: &str, size: usize, offsets: &[(&str, usize)]| {
        let (span, members) = struct_layout(&module, name);
        assert_eq!(span as usize, size, "size of {name}");
        for (field, off) in offsets {
            let m = members
                .iter()
                .find(|(n, _)| n == field)
                .unwrap_or_else(|| panic!("{name}.{field} missing in WGSL"));
            assert_eq!(m.1 as usize, *off, "offset of {name}.{field}");
        }
    };
    use std::mem::{offset_of, size_of};
    check(
        "Frame",
        size_of::<GpuFrame>(),
        &[
            ("dt", offset_of!(GpuFrame, dt)),
            ("instance_count", offset_of!(GpuFrame, instance_count)),
        ],
    );
    check(
        "ClipInfo",
        size_of::<GpuClip>(),
        &[
            ("skeleton", offset_of!(GpuClip, skeleton)),
            ("joint_count", offset_of!(GpuClip, joint_count)),
            ("track_offset", offset_of!(GpuClip, track_offset)),
            ("flags", offset_of!(GpuClip, flags)),
            ("duration", offset_of!(GpuClip, duration)),
        ],
    );
    check(
        "Track",
        size_of::<GpuTrack>(),
        &[
            ("time_offset", offset_of!(GpuTrack, time_offset)),
            ("key_count", offset_of!(GpuTrack, key_count)),
            ("value_offset", offset_of!(GpuTrack, value_offset)),
            ("interpolation", offset_of!(GpuTrack, interpolation)),
        ],
    );
    check(
        "SkeletonInfo",
        size_of::<GpuSkeleton>(),
        &[
            ("joint_count", 0),
            ("joint_offset", offset_of!(GpuSkeleton, joint_offset)),
        ],
    );
    check("Affine", size_of::<Affine>(), &[("x", 0), ("y", 16), ("z", 32)]);
    check(
        "Instance",
        size_of::<GpuInstance>(),
        &[
            ("world", offset_of!(GpuInstance, world)),
            ("clip", offset_of!(GpuInstance, clip)),
            ("skeleton", offset_of!(GpuInstance, skeleton)),
            ("joint_offset", offset_of!(GpuInstance, joint_offset)),
            ("joint_count", offset_of!(GpuInstance, joint_count)),
            ("rate", offset_of!(GpuInstance, rate)),
            ("loop_mode", offset_of!(GpuInstance, loop_mode)),
            ("loop_count", offset_of!(GpuInstance, loop_count)),
            ("tint", offset_of!(GpuInstance, tint)),
        ],
    );
    check(
        "Clock",
        size_of::<GpuClock>(),
        &[
            ("time", 0),
            ("layer_time", offset_of!(GpuClock, layer_time)),
            ("layer_seq", offset_of!(GpuClock, layer_seq)),
        ],
    );
    check(
        "LocalPose",
        size_of::<LocalPose>(),
        &[
            ("translation", 0),
            ("rotation", offset_of!(LocalPose, rotation)),
            ("scale", offset_of!(LocalPose, scale)),
        ],
    );
    check(
        "Instance",
        size_of::<GpuInstance>(),
        &[
            ("params", offset_of!(GpuInstance, params)),
            ("tree_offset", offset_of!(GpuInstance, tree_offset)),
            ("tree_nodes", offset_of!(GpuInstance, tree_nodes)),
            ("seq", offset_of!(GpuInstance, seq)),
            ("start_time", offset_of!(GpuInstance, start_time)),
            ("source_clip", offset_of!(GpuInstance, source_clip)),
            ("source_tree_offset", offset_of!(GpuInstance, source_tree_offset)),
            ("source_tree_nodes", offset_of!(GpuInstance, source_tree_nodes)),
            ("flags", offset_of!(GpuInstance, flags)),
            ("world", offset_of!(GpuInstance, world)),
            ("layers", offset_of!(GpuInstance, layers)),
            ("layer_seq", offset_of!(GpuInstance, layer_seq)),
            ("source_rate", offset_of!(GpuInstance, source_rate)),
            ("source_loop_mode", offset_of!(GpuInstance, source_loop_mode)),
            ("source_loop_count", offset_of!(GpuInstance, source_loop_count)),
            ("transition_duration", offset_of!(GpuInstance, transition_duration)),
        ],
    );
    check(
        "Clock",
        size_of::<GpuClock>(),
        &[
            ("seq", offset_of!(GpuClock, seq)),
            ("source_time", offset_of!(GpuClock, source_time)),
            ("transition_time", offset_of!(GpuClock, transition_time)),
        ],
    );
    check(
        "Frame",
        size_of::<GpuFrame>(),
        &[("snapshot_offset", offset_of!(GpuFrame, snapshot_offset))],
    );
    check(
        "SkeletonInfo",
        size_of::<GpuSkeleton>(),
        &[("rest_offset", offset_of!(GpuSkeleton, rest_offset))],
    );
    check(
        "BlendSample",
        size_of::<BlendSample>(),
        &[
            ("clip", 0),
            ("time", offset_of!(BlendSample, time)),
            ("weight", offset_of!(BlendSample, weight)),
        ],
    );
    check(
        "BlendList",
        size_of::<BlendList>(),
        &[
            ("count", 0),
            ("mesh_additive", offset_of!(BlendList, mesh_additive)),
            ("layers", offset_of!(BlendList, layers)),
            ("samples", offset_of!(BlendList, samples)),
        ],
    );
    check(
        "Layer",
        size_of::<GpuLayer>(),
        &[
            ("def", 0),
            ("weight", offset_of!(GpuLayer, weight)),
            ("rate", offset_of!(GpuLayer, rate)),
            ("start_time", offset_of!(GpuLayer, start_time)),
            ("seq", offset_of!(GpuLayer, seq)),
        ],
    );
    check(
        "LayerDef",
        size_of::<GpuLayerDef>(),
        &[
            ("mode", 0),
            ("mask", offset_of!(GpuLayerDef, mask)),
            ("clip", offset_of!(GpuLayerDef, clip)),
            ("tree_offset", offset_of!(GpuLayerDef, tree_offset)),
            ("tree_nodes", offset_of!(GpuLayerDef, tree_nodes)),
            ("time_parameter", offset_of!(GpuLayerDef, time_parameter)),
            ("loop_mode", offset_of!(GpuLayerDef, loop_mode)),
        ],
    );
    check(
        "LayerApply",
        size_of::<LayerApply>(),
        &[
            ("mode", 0),
            ("weight", offset_of!(LayerApply, weight)),
            ("mask", offset_of!(LayerApply, mask)),
        ],
    );
    check(
        "BlendTree",
        size_of::<GpuBlendTree>(),
        &[
            ("node_offset", 0),
            ("node_count", offset_of!(GpuBlendTree, node_count)),
            ("skeleton", offset_of!(GpuBlendTree, skeleton)),
        ],
    );
    check(
        "BlendNode",
        size_of::<GpuBlendNode>(),
        &[
            ("kind", 0),
            ("child_offset", offset_of!(GpuBlendNode, child_offset)),
            ("child_count", offset_of!(GpuBlendNode, child_count)),
            ("param_x", offset_of!(GpuBlendNode, param_x)),
            ("param_y", offset_of!(GpuBlendNode, param_y)),
            ("clip", offset_of!(GpuBlendNode, clip)),
            ("triangle_offset", offset_of!(GpuBlendNode, triangle_offset)),
            ("triangle_count", offset_of!(GpuBlendNode, triangle_count)),
        ],
    );
    check(
        "BlendChild",
        size_of::<GpuBlendChild>(),
        &[
            ("position", 0),
            ("node", offset_of!(GpuBlendChild, node)),
            ("parameter", offset_of!(GpuBlendChild, parameter)),
        ],
    );
    let (skin, _) = shaders::validate(&shaders::stage_source(Stage::Skin)).unwrap();
    let (span, _) = struct_layout(&skin, "SkinnedOut");
    assert_eq!(span as usize, size_of::<wgpu_anim::cpu::SkinnedPoint>());
    // The workgroup size constant matches.
    let c = module
        .constants
        .iter()
        .find(|(_, c)| c.name.as_deref() == Some("WORKGROUP_SIZE"))
        .expect("WORKGROUP_SIZE");
    let value = &module.global_expressions[c.1.init];
    assert!(
        matches!(value, naga::Expression::Literal(naga::Literal::U32(v)) if *v == WORKGROUP_SIZE),
        "{value:?}"
    );
}
