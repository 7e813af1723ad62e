//! Every WGSL module parses and validates with naga, and every Rust struct shared with WGSL has the
//! size and field offsets naga computes for the WGSL struct.

use wgpu_anim::gpu::SkinBinding;
use wgpu_anim::layout::{
    GpuClip, GpuEvent, GpuEventLogHead, GpuEventRecord, GpuSkeleton, GpuVisibleHead, WORKGROUP_SIZE,
};
use wgpu_anim::math::Affine;
use wgpu_anim::shaders::{self, Stage};

/// The built-in renderer's shader: the skin stage with the skinning module placed by
/// `SkinBinding::BUILT_IN`.
fn built_in_skin_source() -> String {
    shaders::stage_source_with(Stage::Skin, &SkinBinding::BUILT_IN.stage_defs()).unwrap_or_else(|e| panic!("{e}"))
}

/// The skin stage needs the skinning module's placement: without it, an error naming the
/// define, not a panic.
#[test]
fn the_skin_stage_without_its_placement_is_an_error() {
    let e = shaders::stage_source(Stage::Skin).expect_err("the skin stage without placement defines");
    assert!(e.contains("WGPU_ANIM_VERTEX_LOCATION"), "{e}");
    let mut defs = SkinBinding::BUILT_IN.stage_defs();
    defs.retain(|(name, _)| *name != "WGPU_ANIM_INSTANCE_BINDING");
    let e = shaders::stage_source_with(Stage::Skin, &defs).expect_err("no instance binding");
    assert!(e.contains("WGPU_ANIM_INSTANCE_BINDING"), "{e}");
    assert!(shaders::stage_source(Stage::Clock).is_ok());
}

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

/// Every variant of every stage (no feature, each feature alone, all of them, the key search
/// once per clip sample, a SIMD group per character, a thread per character) validates.
#[test]
fn every_stage_module_validates() {
    use naga_oil::compose::ShaderDefValue::Bool;
    let variants: [&[shaders::ShaderDef]; 8] = [
        &[],
        &[
            ("NO_LAYERS", Bool(true)),
            ("NO_INERTIA", Bool(true)),
            ("MORPH", Bool(true)),
        ],
        &[("ROOT_MOTION", Bool(true)), ("OUTPUTS", Bool(true))],
        &[("CURVES", Bool(true)), ("OUTPUTS", Bool(true))],
        &[
            ("ONE_THREAD_WALK", Bool(true)),
            ("IK", Bool(true)),
            ("NARROW_THREADS", Bool(true)),
        ],
        &[("CLIP_TIMES", Bool(true)), ("IK", Bool(true)), ("MORPH", Bool(true))],
        &[
            ("NARROW_THREADS", Bool(true)),
            ("THREAD_PER_CHARACTER", Bool(true)),
            ("CLIP_TIMES", Bool(true)),
            ("CUBIC_KEYS", Bool(true)),
            ("IK", Bool(true)),
            ("MORPH", Bool(true)),
        ],
        shaders::ALL_FEATURES,
    ];
    for stage in Stage::ALL {
        for defs in variants {
            let mut defs = defs.to_vec();
            if stage == Stage::Skin {
                defs.extend(SkinBinding::BUILT_IN.stage_defs());
            }
            let src = shaders::stage_source_with(stage, &defs).unwrap_or_else(|e| panic!("{e}"));
            let (module, _) = shaders::validate(&src).unwrap_or_else(|e| panic!("{} {defs:?}: {e}", stage.name()));
            let has_entry = module.entry_points.iter().any(|e| e.name == stage.name());
            assert!(has_entry, "{} has no entry point of its own name", stage.name());
        }
    }
}

/// Each resource's minimum binding size, which the bind group layouts declare, is its WGSL
/// type's size as naga lays it out (a runtime-sized array counting one element), in every stage
/// that binds it.
#[test]
fn every_binding_declares_its_wgsl_size() {
    let mut checked = 0;
    for stage in Stage::ALL.into_iter().filter(|s| !s.bindings().is_empty()) {
        let src = shaders::stage_source_with(stage, shaders::ALL_FEATURES).unwrap();
        let (module, _) = shaders::validate(&src).unwrap();
        for (_, global) in module.global_variables.iter() {
            let Some(resource) = shaders::Resource::ALL
                .into_iter()
                .find(|r| global.name.as_deref() == Some(r.name()))
            else {
                continue;
            };
            let size = module.types[global.ty].inner.size(module.to_ctx());
            assert_eq!(
                u64::from(size),
                resource.min_binding_size(),
                "{}: {}",
                stage.name(),
                resource.name()
            );
            checked += 1;
        }
    }
    assert!(checked >= 40, "{checked} bindings checked");
    // A section has no binding; its size is its element's, as a binding of it alone declares.
    assert_eq!(
        shaders::Resource::DualPalettes.min_binding_size(),
        size_of::<wgpu_anim::math::DualQuat>() as u64
    );
}

/// The globals an entry point of a stage's module (with every feature) reads or writes, by name.
fn globals_used(stage: Stage) -> Vec<(String, naga::valid::GlobalUse)> {
    globals_used_with(stage, shaders::ALL_FEATURES)
}

/// Every feature, with a thread per character (`gpu::CharacterThreads::One`).
fn all_features_thread_per_character() -> Vec<shaders::ShaderDef> {
    let on = naga_oil::compose::ShaderDefValue::Bool(true);
    let mut defs = shaders::ALL_FEATURES.to_vec();
    defs.extend([("NARROW_THREADS", on), ("THREAD_PER_CHARACTER", on)]);
    defs
}

/// The globals an entry point of a stage's module with `defs` reads or writes, by name.
fn globals_used_with(stage: Stage, defs: &[shaders::ShaderDef]) -> Vec<(String, naga::valid::GlobalUse)> {
    let source = shaders::stage_source_with(stage, defs).unwrap();
    let (module, info) = shaders::validate(&source).unwrap();
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
fn the_fused_stage_keeps_poses_out_of_memory_and_reads_the_clocks_lists() {
    use naga::valid::GlobalUse;
    let fused = globals_used(Stage::Fused);
    let uses = |name: &str| fused.iter().find(|(n, _)| n == name).map(|(_, u)| *u);
    // Model matrices never leave workgroup memory; local poses are written (and read) only as
    // snapshots; the blend lists are read where the clock pass before it wrote them, in the
    // character state.
    assert_eq!(uses("model_poses"), None);
    assert!(uses("wg_pose").is_some());
    assert!(uses("character_state").unwrap().contains(GlobalUse::READ));
    assert!(uses("palettes").unwrap().contains(GlobalUse::WRITE));
    // The clock is a pass of its own: nothing of it is in the fused stage.
    assert_eq!(uses("events"), None);
    assert_eq!(uses("layer_defs"), None);
    // The staged sample stage keeps nothing in workgroup memory (with CLIP_TIMES, only the keys
    // of the blend list's samples).
    let sample = globals_used(Stage::Sample);
    assert!(!sample.iter().any(|(n, _)| n.starts_with("wg_")));
}

/// Each animation stage's binding table is exactly what its entry point uses with every feature,
/// a workgroup or a thread per character: every bound resource is used, every used resource is
/// bound, read-write only where the stage writes.
#[test]
fn every_stage_binds_what_it_uses_read_only_where_it_only_reads() {
    use naga::valid::GlobalUse;
    use wgpu_anim::shaders::{Access, Resource};
    for stage in Stage::ALL.into_iter().filter(|&s| s != Stage::Skin) {
        let mut used = globals_used(stage);
        for (name, u) in globals_used_with(stage, &all_features_thread_per_character()) {
            match used.iter_mut().find(|(n, _)| *n == name) {
                Some((_, was)) => *was |= u,
                None => used.push((name, u)),
            }
        }
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
/// storage slots to spare, in every variant: at least two of the eight storage buffers a stage
/// may bind stay free, with every feature on (dual quaternions, morph weights, IK, culling, LOD
/// interpolation, layers, inertialization) and each way of running a character (a SIMD group
/// or a thread each), and with each feature off in turn. The GPU tests run on a device with
/// exactly those limits.
#[test]
fn every_stage_fits_webgpu_default_limits_with_slots_to_spare() {
    let limits = wgpu::Limits::default();
    const { assert!(wgpu_anim::shaders::STORAGE_SLOTS_SPARE >= 2) };
    let storage_used = |stage: Stage, defs: &[shaders::ShaderDef]| {
        let used = globals_used_with(stage, defs);
        stage
            .bindings()
            .iter()
            .filter(|(r, a)| *a != wgpu_anim::shaders::Access::Uniform && used.iter().any(|(n, _)| n == r.name()))
            .count() as u32
    };
    let lanes = all_features_thread_per_character();
    let on = naga_oil::compose::ShaderDefValue::Bool(true);
    // Every feature on, with each way of running a character, and two that leave one out. A
    // variant binds only what its entry point uses, a subset of its stage's table (checked
    // below and by `each_stage_binds_what_it_uses`), so the table's count bounds them all.
    let mut no_dual = lanes.clone();
    no_dual.push(("NO_DUAL_QUATERNION", on));
    let no_morph: Vec<shaders::ShaderDef> = lanes.iter().copied().filter(|(n, _)| *n != "MORPH").collect();
    let variants = [shaders::ALL_FEATURES.to_vec(), lanes.clone(), no_dual, no_morph];
    // The fused stage with a thread per character and every feature binds the most: six.
    assert_eq!(storage_used(Stage::Fused, &lanes), 6);
    for stage in Stage::ALL {
        let mut storage = stage.storage_buffers();
        if stage != Stage::Skin {
            for defs in &variants {
                // A variant binds what its entry point uses, never past the stage's table.
                let used = storage_used(stage, defs);
                assert!(used <= stage.storage_buffers(), "{}: {defs:?}", stage.name());
                storage = storage.max(used);
            }
        }
        let uniforms = stage.bindings().len() as u32 - stage.storage_buffers();
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
    // The fused stage's workgroup memory, as naga lays it out, with every feature's.
    let mut defs = shaders::ALL_FEATURES.to_vec();
    defs.push(("CLIP_TIMES", naga_oil::compose::ShaderDefValue::Bool(true)));
    let (module, _) = shaders::validate(&shaders::stage_source_with(Stage::Fused, &defs).unwrap()).unwrap();
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

#[cfg(feature = "scene")]
#[test]
fn the_ground_shader_validates() {
    shaders::validate(&shaders::ground_source(None)).unwrap();
    shaders::validate(&shaders::ground_source(Some(wgpu_anim::scene::RELIEF))).unwrap();
}

/// The built-in renderers' shaders that are not composed (the props', the footprint marks')
/// validate with the camera's declaration, made from Rust's `layout::Camera`, before them; none
/// declares a `Camera` of its own.
#[test]
fn the_prop_and_footprint_mark_shaders_validate_with_the_camera_declared_in_rust() {
    let prop = include_str!("../shaders/prop.wgsl");
    let marks = include_str!("../shaders/footprint_marks.wgsl");
    for (name, source) in [
        (
            "prop",
            shaders::with_camera(&format!("{prop}\n{}", SkinBinding::BUILT_IN.wgsl())),
        ),
        ("footprint marks", shaders::with_camera(marks)),
    ] {
        shaders::validate(&source).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
    for source in [prop, marks, include_str!("../shaders/ground.wgsl"), Stage::Skin.file()] {
        assert!(!source.contains("struct Camera"));
    }
}

/// The naga type a vertex format is read as.
fn vertex_input_type(format: wgpu::VertexFormat) -> naga::TypeInner {
    use naga::{Scalar, TypeInner, VectorSize};
    use wgpu::VertexFormat as F;
    let vector = |size, scalar| TypeInner::Vector { size, scalar };
    match format {
        F::Float32x2 => vector(VectorSize::Bi, Scalar::F32),
        F::Float32x3 => vector(VectorSize::Tri, Scalar::F32),
        F::Float32x4 => vector(VectorSize::Quad, Scalar::F32),
        F::Uint16x4 => vector(VectorSize::Quad, Scalar::U32),
        other => panic!("no WGSL type listed for {other:?}"),
    }
}

#[test]
fn the_skin_vertex_layout_matches_the_skinning_shader_inputs() {
    use wgpu_anim::mesh::SkinVertex;
    let (module, _) = shaders::validate(&built_in_skin_source()).unwrap();
    let vs = module.entry_points.iter().find(|e| e.name == "vs_main").unwrap();
    let mut inputs = Vec::new();
    for arg in &vs.function.arguments {
        let ty = &module.types[arg.ty].inner;
        let members: Vec<(Option<naga::Binding>, naga::Handle<naga::Type>)> = match ty {
            naga::TypeInner::Struct { members, .. } => members.iter().map(|m| (m.binding.clone(), m.ty)).collect(),
            _ => vec![(arg.binding.clone(), arg.ty)],
        };
        for (binding, ty) in members {
            if let Some(naga::Binding::Location { location, .. }) = binding {
                inputs.push((location, module.types[ty].inner.clone()));
            }
        }
    }
    inputs.sort_by_key(|(l, _)| *l);
    let layout: Vec<(u32, naga::TypeInner)> = SkinVertex::LAYOUT
        .attributes
        .iter()
        .map(|a| (a.shader_location, vertex_input_type(a.format)))
        .collect();
    assert_eq!(inputs, layout);
    // The attributes cover the vertex without overlapping, in field order.
    let mut end = 0;
    for a in SkinVertex::LAYOUT.attributes {
        assert_eq!(a.offset, end, "attribute at location {}", a.shader_location);
        end += a.format.size();
    }
    assert_eq!(end, SkinVertex::LAYOUT.array_stride);
    assert_eq!(SkinVertex::attributes(3)[4].shader_location, 7);
}

#[test]
fn a_broken_shader_is_reported() {
    let broken = shaders::stage_source(Stage::Sample)
        .unwrap()
        .replace("fn sample_joint", "fn sample_joint(");
    assert!(shaders::validate(&broken).is_err());
}

/// A Rust struct mirrored in WGSL: its WGSL name, size and the offsets of its fields other than
/// padding, in declaration order.
struct Mirror {
    wgsl: &'static str,
    size: usize,
    fields: Vec<(&'static str, usize)>,
}

macro_rules! mirror {
    ($wgsl:literal, $ty:ty, [$($field:ident),* $(,)?]) => {
        Mirror {
            wgsl: $wgsl,
            size: std::mem::size_of::<$ty>(),
            fields: vec![$((stringify!($field), std::mem::offset_of!($ty, $field))),*],
        }
    };
}

/// Every struct of the types module with its Rust twin: those `shaders/shared/types.wgsl`
/// writes by hand, listed here, and those declared in Rust (`layout::generated`), whose WGSL is
/// made from the Rust declaration (this checks that Rust's layout of them is WGSL's). A field
/// added on one side only changes a size or a name list and fails
/// [`every_shared_struct_matches_its_rust_mirror`].
fn mirrors() -> Vec<Mirror> {
    let generated = wgpu_anim::layout::generated().into_iter().map(|g| Mirror {
        wgsl: g.name,
        size: g.size,
        fields: g.fields.into_iter().filter(|(n, _)| !is_padding(n)).collect(),
    });
    let hand_written = vec![
        mirror!(
            "ClipInfo",
            GpuClip,
            [
                skeleton,
                joint_count,
                track_offset,
                flags,
                duration,
                event_offset,
                event_count,
                root_track
            ]
        ),
        mirror!("ClipEvent", GpuEvent, [time, name, threshold]),
        // The log's head, then its records (naga sizes a runtime array as one element).
        Mirror {
            wgsl: "EventLog",
            size: size_of::<GpuEventLogHead>() + size_of::<GpuEventRecord>(),
            fields: vec![
                ("count", std::mem::offset_of!(GpuEventLogHead, count)),
                ("overflow", std::mem::offset_of!(GpuEventLogHead, overflow)),
                ("records", size_of::<GpuEventLogHead>()),
            ],
        },
        mirror!(
            "SkeletonInfo",
            GpuSkeleton,
            [joint_count, joint_offset, rest_offset, socket_count]
        ),
        // The list's head, then the list (a runtime array naga sizes as one element; the struct
        // rounded up to its 16-byte alignment).
        Mirror {
            wgsl: "Visible",
            size: (size_of::<GpuVisibleHead>() + 4).next_multiple_of(16),
            fields: vec![
                ("instance_groups", std::mem::offset_of!(GpuVisibleHead, instance_groups)),
                ("thread_groups", std::mem::offset_of!(GpuVisibleHead, thread_groups)),
                ("count", std::mem::offset_of!(GpuVisibleHead, count)),
                ("drawn_count", std::mem::offset_of!(GpuVisibleHead, drawn_count)),
                ("drawn_offset", std::mem::offset_of!(GpuVisibleHead, drawn_offset)),
                ("vat_count", std::mem::offset_of!(GpuVisibleHead, vat_count)),
                ("drawn_groups", std::mem::offset_of!(GpuVisibleHead, drawn_groups)),
                ("list", wgpu_anim::layout::VISIBLE_LIST_OFFSET as usize),
            ],
        },
    ];
    hand_written.into_iter().chain(generated).collect()
}

/// Padding: `_pad*` in Rust, `pad*` in WGSL (naga_oil's modules may not use leading underscores).
fn is_padding(name: &str) -> bool {
    name.trim_start_matches('_').starts_with("pad")
}

/// Differences between the WGSL structs of `types` and `mirrors`: empty when every struct of
/// the one has its twin in the other, with the same size and the same fields at the same offsets.
fn struct_differences(types: &naga::Module, mirrors: &[Mirror]) -> Vec<String> {
    let mut out = Vec::new();
    let mut layouter = naga::proc::Layouter::default();
    layouter.update(types.to_ctx()).unwrap();
    let mut seen = Vec::new();
    for (handle, ty) in types.types.iter() {
        let (Some(name), naga::TypeInner::Struct { members, .. }) = (ty.name.as_deref(), &ty.inner) else {
            continue;
        };
        seen.push(name.to_owned());
        let Some(m) = mirrors.iter().find(|m| m.wgsl == name) else {
            out.push(format!("WGSL struct {name} has no Rust mirror"));
            continue;
        };
        let size = layouter[handle].size as usize;
        if size != m.size {
            out.push(format!("{name}: {size} bytes in WGSL, {} in Rust", m.size));
        }
        let wgsl: Vec<(String, usize)> = members
            .iter()
            .map(|f| (f.name.clone().unwrap_or_default(), f.offset as usize))
            .filter(|(n, _)| !is_padding(n))
            .collect();
        let rust: Vec<(String, usize)> = m.fields.iter().map(|(n, o)| ((*n).to_owned(), *o)).collect();
        if wgsl != rust {
            out.push(format!("{name}: WGSL fields {wgsl:?}, Rust fields {rust:?}"));
        }
    }
    for m in mirrors {
        if !seen.iter().any(|s| s == m.wgsl) {
            out.push(format!("Rust mirror of {} has no WGSL struct", m.wgsl));
        }
    }
    out
}

#[test]
fn every_shared_struct_matches_its_rust_mirror() {
    let types = shaders::validate(&shaders::types_source()).unwrap().0;
    let differences = struct_differences(&types, &mirrors());
    assert!(differences.is_empty(), "{differences:#?}");
    // The check fails on a field moved, a field renamed, a size changed, a struct missing.
    let changed =
        shaders::types_source().replace("    weight: f32,\n    layer: u32,", "    layer: u32,\n    weight: f32,");
    let changed = shaders::validate(&changed).unwrap().0;
    assert!(!struct_differences(&changed, &mirrors()).is_empty());
    // A struct declared in Rust whose WGSL layout is not Rust's (a field aligned differently).
    let misaligned = shaders::types_source().replace("    world_seq: u32,\n", "    world_seq: vec4<u32>,\n");
    let misaligned = shaders::validate(&misaligned).unwrap().0;
    assert!(!struct_differences(&misaligned, &mirrors()).is_empty());
    let mut fewer = mirrors();
    fewer.retain(|m| m.wgsl != "Clock");
    assert!(!struct_differences(&types, &fewer).is_empty());
    // The skinning output the `skin` stage writes.
    let (skin, _) = shaders::validate(&built_in_skin_source()).unwrap();
    let (span, _) = struct_layout(&skin, "SkinnedOut");
    assert_eq!(span as usize, size_of::<wgpu_anim::cpu::SkinnedPoint>());
}

/// A constant's value, as Rust and naga give it.
#[derive(Clone, Debug, PartialEq)]
enum Value {
    U32(u32),
    F32(f32),
    F32s(Vec<f32>),
}

/// Every constant the WGSL shares with Rust, with the Rust value.
fn rust_constants() -> Vec<(&'static str, Value)> {
    use Value::{F32, F32s, U32};
    use wgpu_anim::cpu::blend_weights;
    use wgpu_anim::layout::{self, layer_mode, node_kind, source_kind};
    vec![
        ("WORKGROUP_SIZE", U32(WORKGROUP_SIZE)),
        // Its first definition, with NARROW_THREADS (the other is WORKGROUP_SIZE).
        ("CHARACTER_THREADS", U32(layout::NARROW_THREADS)),
        // Their first definitions, with THREAD_PER_CHARACTER (the others are 1 and
        // CHARACTER_THREADS).
        (
            "CHARACTERS_PER_WORKGROUP",
            U32(wgpu_anim::gpu::CharacterThreads::One.characters_per_workgroup()),
        ),
        (
            "JOINT_STRIDE",
            U32(wgpu_anim::gpu::CharacterThreads::One.count().unwrap()),
        ),
        ("INTERP_STEP", U32(wgpu_anim::Interpolation::Step.gpu_code())),
        ("INTERP_LINEAR", U32(wgpu_anim::Interpolation::Linear.gpu_code())),
        ("INTERP_CUBIC", U32(wgpu_anim::Interpolation::CubicSpline.gpu_code())),
        ("INTERP_PACKED", U32(wgpu_anim::layout::INTERP_PACKED)),
        ("PACKED_JOINT_BIT", U32(layout::PACKED_JOINT_BIT)),
        ("CLOCK_UNIT_SOURCE", U32(layout::CLOCK_UNIT_SOURCE)),
        ("CLOCK_UNIT_TRANSITION", U32(layout::CLOCK_UNIT_TRANSITION)),
        ("CLOCK_UNIT_LAYERS", U32(layout::CLOCK_UNIT_LAYERS)),
        ("LOOP_ONCE", U32(layout::LOOP_ONCE)),
        ("LOOP_REPEAT", U32(layout::LOOP_REPEAT)),
        ("LOOP_FOREVER", U32(layout::LOOP_FOREVER)),
        (
            "CUBIC_ROTATION_MIN_LENGTH2",
            F32(wgpu_anim::math::CUBIC_ROTATION_MIN_LENGTH2),
        ),
        ("ACOS_P", F32s(wgpu_anim::math::ACOS_P.to_vec())),
        ("DECAY_NEGLIGIBLE", F32(wgpu_anim::cpu::inertia::DECAY_NEGLIGIBLE)),
        ("VELOCITY_MIN_DT", F32(wgpu_anim::cpu::inertia::VELOCITY_MIN_DT)),
        ("SOURCE_NONE", U32(source_kind::NONE)),
        ("SOURCE_CLIP", U32(source_kind::CLIP)),
        ("SOURCE_TREE", U32(source_kind::TREE)),
        ("SOURCE_SNAPSHOT", U32(source_kind::SNAPSHOT)),
        ("SOURCE_OFFSET", U32(source_kind::OFFSET)),
        ("KEEP_VELOCITY", U32(layout::KEEP_VELOCITY)),
        ("VELOCITY_FROM_LAST_POSE", U32(layout::VELOCITY_FROM_LAST_POSE)),
        ("FRAME_CULL", U32(layout::FRAME_CULL)),
        ("FRAME_CULL_VIEW", U32(layout::FRAME_CULL_VIEW)),
        ("MARK_EVALUATE", U32(layout::MARK_EVALUATE)),
        ("MARK_DRAWN", U32(layout::MARK_DRAWN)),
        ("MARK_ENTERED", U32(layout::MARK_ENTERED)),
        ("MARK_VAT", U32(layout::MARK_VAT)),
        ("MARK_RATE_SHIFT", U32(layout::MARK_RATE_SHIFT)),
        ("FRAME_VAT", U32(layout::FRAME_VAT)),
        ("FRAME_LOD_INTERPOLATE", U32(layout::FRAME_LOD_INTERPOLATE)),
        ("CULL_MAX_WORKGROUPS", U32(layout::CULL_MAX_WORKGROUPS)),
        ("TRANSITION_DEAD_BLEND", U32(layout::TRANSITION_DEAD_BLEND)),
        ("INERTIA_OFFSET", U32(layout::inertia::OFFSET)),
        ("INERTIA_DEAD_BLEND", U32(layout::inertia::DEAD_BLEND)),
        ("INERTIA_SWITCH", U32(layout::inertia::SWITCH)),
        ("INERTIA_VELOCITY", U32(layout::inertia::VELOCITY)),
        ("INERTIA_PREVIOUS", U32(layout::inertia::PREVIOUS)),
        ("INERTIA_LAST_POSE", U32(layout::inertia::LAST_POSE)),
        ("INERTIA_KEEP_POSE", U32(layout::inertia::KEEP_POSE)),
        ("MACHINE", U32(layout::MACHINE)),
        ("MACHINE_PLAYBACK_KEEPS", U32(layout::MACHINE_PLAYBACK_KEEPS)),
        ("MAX_MACHINE_PARAMETERS", U32(layout::MAX_MACHINE_PARAMETERS)),
        ("MACHINE_NONE", U32(layout::MACHINE_NONE)),
        ("MACHINE_STATE_LOOPS", U32(layout::MACHINE_STATE_LOOPS)),
        ("MACHINE_FROM_POSE", U32(layout::MACHINE_FROM_POSE)),
        ("MACHINE_EVENT_CLIP", U32(layout::MACHINE_EVENT_CLIP)),
        ("MACHINE_EVENT_STATE_ENTERED", U32(layout::machine_event::STATE_ENTERED)),
        (
            "MACHINE_EVENT_TRANSITION_ENDED",
            U32(layout::machine_event::TRANSITION_ENDED),
        ),
        ("MACHINE_EVENT_STATE_EXITED", U32(layout::machine_event::STATE_EXITED)),
        (
            "MACHINE_EVENT_TRANSITION_STARTED",
            U32(layout::machine_event::TRANSITION_STARTED),
        ),
        ("MACHINE_TRANSITION_HAS_EXIT", U32(layout::machine_transition::HAS_EXIT)),
        (
            "MACHINE_TRANSITION_FIXED_DURATION",
            U32(layout::machine_transition::FIXED_DURATION),
        ),
        ("MACHINE_TRANSITION_TO_SELF", U32(layout::machine_transition::TO_SELF)),
        (
            "MACHINE_TRANSITION_INERTIALIZE",
            U32(layout::machine_transition::INERTIALIZE),
        ),
        ("MACHINE_TRANSITION_SMOOTH", U32(layout::machine_transition::SMOOTH)),
        (
            "MACHINE_TRANSITION_INTERRUPT_SHIFT",
            U32(layout::machine_transition::INTERRUPT_SHIFT),
        ),
        (
            "MACHINE_TRANSITION_INTERRUPT_SOURCE",
            U32(layout::machine_transition::INTERRUPT_SOURCE),
        ),
        (
            "MACHINE_TRANSITION_INTERRUPT_DESTINATION",
            U32(layout::machine_transition::INTERRUPT_DESTINATION),
        ),
        (
            "MACHINE_CONDITION_FLOAT_GREATER",
            U32(layout::machine_condition::FLOAT_GREATER),
        ),
        (
            "MACHINE_CONDITION_FLOAT_LESS",
            U32(layout::machine_condition::FLOAT_LESS),
        ),
        (
            "MACHINE_CONDITION_INT_GREATER",
            U32(layout::machine_condition::INT_GREATER),
        ),
        ("MACHINE_CONDITION_INT_LESS", U32(layout::machine_condition::INT_LESS)),
        ("MACHINE_CONDITION_INT_EQUAL", U32(layout::machine_condition::INT_EQUAL)),
        (
            "MACHINE_CONDITION_INT_NOT_EQUAL",
            U32(layout::machine_condition::INT_NOT_EQUAL),
        ),
        ("MACHINE_CONDITION_TRUE", U32(layout::machine_condition::TRUE)),
        ("MACHINE_CONDITION_FALSE", U32(layout::machine_condition::FALSE)),
        ("MACHINE_CONDITION_TRIGGER", U32(layout::machine_condition::TRIGGER)),
        ("PREVIOUS_TAG", U32(layout::inertia::PREVIOUS_TAG)),
        ("TRANSITION_SMOOTH", U32(layout::TRANSITION_SMOOTH)),
        ("TRANSITION_FROZEN", U32(layout::TRANSITION_FROZEN)),
        ("KEEP_POSE", U32(layout::KEEP_POSE)),
        ("LAYER_ON", U32(layout::LAYER_ON)),
        ("LAYER_MESH", U32(layout::LAYER_MESH)),
        ("SNAPSHOT_CLIP", U32(layout::SNAPSHOT_CLIP)),
        ("MAX_BLEND_CHILDREN", U32(layout::MAX_BLEND_CHILDREN)),
        ("MAX_TREE_NODES", U32(layout::MAX_TREE_NODES)),
        ("MAX_BLEND_CLIPS", U32(layout::MAX_BLEND_CLIPS)),
        ("BLEND_LIST_UNITS", U32(layout::BLEND_LIST_UNITS)),
        ("MAX_LAYERS", U32(layout::MAX_LAYERS)),
        ("MAX_LAYER_DEFS", U32(layout::MAX_LAYER_DEFS)),
        ("MAX_FUSED_JOINTS", U32(layout::MAX_FUSED_JOINTS)),
        ("JOINT_TRACK_OFFSET_BITS", U32(layout::JOINT_TRACK_OFFSET_BITS)),
        ("MAX_SOCKETS", U32(layout::MAX_SOCKETS)),
        ("IK_ON", U32(layout::IK_ON)),
        ("MAX_IK_CHAINS", U32(layout::MAX_IK_CHAINS)),
        ("MAX_AIM_JOINTS", U32(layout::MAX_AIM_JOINTS)),
        ("NO_JOINT", U32(layout::NO_JOINT)),
        ("IK_TWO_BONE", U32(layout::ik_kind::TWO_BONE)),
        ("IK_AIM", U32(layout::ik_kind::AIM)),
        ("IK_TARGET_MODEL", U32(layout::ik_target::MODEL)),
        ("IK_TARGET_WORLD", U32(layout::ik_target::WORLD)),
        ("IK_TARGET_LOOK_AT", U32(layout::ik_target::LOOK_AT)),
        ("IK_TARGET_GROUND", U32(layout::ik_target::GROUND)),
        ("LAYER_OFF", U32(layer_mode::OFF)),
        ("LAYER_OVERRIDE", U32(layer_mode::OVERRIDE)),
        ("LAYER_ADDITIVE_LOCAL", U32(layer_mode::ADDITIVE_LOCAL)),
        ("LAYER_ADDITIVE_MESH", U32(layer_mode::ADDITIVE_MESH)),
        ("NO_MASK", U32(layout::NO_MASK)),
        ("NO_TIME_PARAMETER", U32(layout::NO_TIME_PARAMETER)),
        ("NODE_CLIP", U32(node_kind::CLIP)),
        ("NODE_BLEND_1D", U32(node_kind::BLEND_1D)),
        ("NODE_BILINEAR", U32(node_kind::BILINEAR)),
        ("NODE_TRIANGLE", U32(node_kind::TRIANGLE)),
        ("NODE_DELAUNAY", U32(node_kind::DELAUNAY)),
        ("NODE_SIMPLE_DIRECTIONAL", U32(node_kind::SIMPLE_DIRECTIONAL)),
        ("NODE_FREEFORM_CARTESIAN", U32(node_kind::FREEFORM_CARTESIAN)),
        ("NODE_FREEFORM_DIRECTIONAL", U32(node_kind::FREEFORM_DIRECTIONAL)),
        ("NODE_DIRECT", U32(node_kind::DIRECT)),
        ("MIN_BLEND_WEIGHT", F32(layout::MIN_BLEND_WEIGHT)),
        ("TICK_BITS", U32(layout::TICK_BITS)),
        ("FRAME_EVENTS", U32(layout::FRAME_EVENTS)),
        ("FRAME_CURVES", U32(layout::FRAME_CURVES)),
        ("FRAME_DUAL_QUATERNION", U32(layout::FRAME_DUAL_QUATERNION)),
        ("POLAR_ITERATIONS", U32(wgpu_anim::math::POLAR_ITERATIONS)),
        ("POLAR_TOLERANCE", F32(wgpu_anim::math::POLAR_TOLERANCE)),
        ("POLAR_FLAT_DET", F32(wgpu_anim::math::POLAR_FLAT_DET)),
        ("POLAR_MIN_COFACTOR", F32(wgpu_anim::math::POLAR_MIN_COFACTOR)),
        ("MAX_CURVES", U32(layout::MAX_CURVES)),
        ("CLIP_CURVE_SHIFT", U32(layout::CLIP_CURVE_SHIFT)),
        ("CLIP_MORPH_SHIFT", U32(layout::CLIP_MORPH_SHIFT)),
        ("NO_ROOT_MOTION", U32(layout::NO_ROOT_MOTION)),
        ("RETARGET_UNMAPPED", U32(layout::RETARGET_UNMAPPED)),
        ("RETARGET_ROOT", U32(layout::RETARGET_ROOT)),
        ("RETARGET_WORD_SOURCE", U32(layout::RETARGET_WORD_SOURCE)),
        ("RETARGET_WORD_LINKS_SHIFT", U32(layout::RETARGET_WORD_LINKS_SHIFT)),
        ("RETARGET_WORD_ROOT", U32(layout::RETARGET_WORD_ROOT)),
        ("RETARGET_WORD_SCALED", U32(layout::RETARGET_WORD_SCALED)),
        ("ROOT_MOTION", U32(layout::ROOT_MOTION)),
        ("TICK_LIMIT_HI", U32(layout::TICK_LIMIT_HI)),
        ("BLEND_PARAM_LIMIT", F32(blend_weights::BLEND_PARAM_LIMIT)),
        ("BLEND_INSIDE_EPS", F32(blend_weights::BLEND_INSIDE_EPS)),
        ("BLEND_SUM_EPS", F32(blend_weights::BLEND_SUM_EPS)),
        ("BLEND_DET_EPS", F32(blend_weights::BLEND_DET_EPS)),
        ("BLEND_PI", F32(blend_weights::BLEND_PI)),
        ("BLEND_TAU", F32(blend_weights::BLEND_TAU)),
        ("BLEND_BIG", F32(blend_weights::BLEND_BIG)),
        ("VERTEX_WORDS", U32((size_of::<wgpu_anim::SkinVertex>() / 4) as u32)),
    ]
}

/// Every module-scope `const NAME: u32|f32 = LITERAL;` of `sources`, with its value (`None`
/// when it is not such a literal, or a one-line array of them). Read from the sources, since naga folds constants into the
/// expressions that use them.
fn wgsl_constants(sources: &[&str]) -> Vec<(String, Option<Value>)> {
    let mut out: Vec<(String, Option<Value>)> = Vec::new();
    for source in sources {
        for line in source.lines().filter_map(|l| l.strip_prefix("const ")) {
            let (name, rest) = line.split_once(':').unwrap_or((line, ""));
            let (ty, literal) = rest.split_once('=').unwrap_or((rest, ""));
            let literal = literal.trim().trim_end_matches(';');
            let value = match ty.trim() {
                "u32" => {
                    let digits = literal.trim_end_matches('u');
                    match digits.strip_prefix("0x") {
                        Some(hex) => u32::from_str_radix(hex, 16).ok(),
                        None => digits.parse().ok(),
                    }
                    .map(Value::U32)
                }
                "f32" => literal.trim_end_matches('f').parse::<f32>().ok().map(Value::F32),
                // An array of f32 literals on one line: `array<f32, N>(a, b, …)`.
                t if t.starts_with("array<f32,") => literal
                    .strip_prefix(t)
                    .and_then(|l| l.strip_prefix('('))
                    .and_then(|l| l.strip_suffix(')'))
                    .and_then(|l| l.split(',').map(|x| x.trim().parse::<f32>().ok()).collect())
                    .map(Value::F32s),
                _ => None,
            };
            let name = name.trim().to_owned();
            if !out.iter().any(|(n, _)| *n == name) {
                out.push((name, value));
            }
        }
    }
    out
}

/// Every WGSL source of the crate (the stage files and the shared ones).
fn all_sources() -> Vec<&'static str> {
    let mut sources = vec![
        shaders::TYPES,
        shaders::MATH,
        shaders::LIBRARY,
        shaders::BLEND_WEIGHTS,
        shaders::TICKS,
        shaders::LOOPING,
        shaders::EVENTS,
        shaders::ROOT_MOTION,
        shaders::CURVES,
        shaders::INERTIA,
        shaders::CULLING,
        shaders::STATE,
        shaders::SKINNING_MODULE,
    ];
    sources.extend(Stage::ALL.iter().map(|s| s.file()));
    sources
}

/// Differences between the WGSL constants and the Rust ones: every WGSL constant must have a
/// Rust twin of the same value, and every Rust entry must be in the WGSL.
fn constant_differences(wgsl: &[(String, Option<Value>)], rust: &[(&str, Value)]) -> Vec<String> {
    let mut out = Vec::new();
    for (name, value) in wgsl {
        match (rust.iter().find(|(n, _)| n == name), value) {
            (None, _) => out.push(format!("WGSL constant {name} has no Rust twin")),
            (Some(_), None) => out.push(format!("WGSL constant {name} is not a u32 or f32 literal")),
            (Some((_, r)), Some(w)) if r != w => out.push(format!("{name}: {w:?} in WGSL, {r:?} in Rust")),
            _ => {}
        }
    }
    for (name, _) in rust {
        if !wgsl.iter().any(|(n, _)| n == name) {
            out.push(format!("Rust constant {name} is in no WGSL module"));
        }
    }
    out
}

#[test]
fn every_shared_constant_matches_rust() {
    let differences = constant_differences(&wgsl_constants(&all_sources()), &rust_constants());
    assert!(differences.is_empty(), "{differences:#?}");
    // A constant changed on one side is caught.
    let changed = shaders::TYPES.replace("const MAX_LAYERS: u32 = 3u;", "const MAX_LAYERS: u32 = 4u;");
    assert_ne!(changed, shaders::TYPES);
    let mut sources = all_sources();
    sources[0] = &changed;
    let differences = constant_differences(&wgsl_constants(&sources), &rust_constants());
    assert!(
        differences.iter().any(|d| d.starts_with("MAX_LAYERS")),
        "{differences:#?}"
    );
}

/// A user's vertex shader with structs of its own under the crate's internal names, skinning
/// through the module.
const USER_SHADER: &str = "
struct Instance { a: u32 }
struct Frame { b: f32 }
struct Clock { c: f32 }
struct Track { d: u32 }
struct Affine { e: vec4<f32> }
struct Camera { view_proj: mat4x4<f32> }
@group(0) @binding(0) var<uniform> camera: Camera;

struct VertexIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) joints: vec4<u32>,
    @location(4) weights: vec4<f32>,
}

@vertex
fn main(v: VertexIn, @builtin(instance_index) instance_index: u32) -> @builtin(position) vec4<f32> {
    let i = wgpu_anim_PageInstance(instance_index);
    let s = SKIN(i, v.joints, v.weights, v.position, v.normal);
    let t = SKIN_WITH_TANGENT(i, v.joints, v.weights, v.position, v.normal, vec4<f32>(1.0, 0.0, 0.0, 1.0));
    let motion = s.position - PREVIOUS(i, v.joints, v.weights, v.position);
    return camera.view_proj * WORLD(i) * vec4<f32>(s.position + 0.001 * motion + 0.0 * t.tangent.xyz, 1.0);
}
";

/// The group and binding of a global variable of `module` called `name`.
fn binding_of(module: &naga::Module, name: &str) -> Option<(u32, u32)> {
    module
        .global_variables
        .iter()
        // naga_oil decorates an imported name with a suffix.
        .find(|(_, g)| g.name.as_deref().is_some_and(|n| n.starts_with(name)))
        .and_then(|(_, g)| g.binding.as_ref().map(|b| (b.group, b.binding)))
}

#[test]
fn the_skinning_module_joins_a_user_shader_with_its_own_instance_frame_clock_and_track() {
    let binding = SkinBinding::new(2, 5)
        .with_previous(true)
        .with_dual_quaternion(true)
        .with_morph(true)
        .with_vat(true)
        .with_location(3);
    // Plain text, appended.
    let user = USER_SHADER
        .replace("SKIN_WITH_TANGENT(", "wgpu_anim_skin_with_tangent(")
        .replace("SKIN(", "wgpu_anim_skin(")
        .replace("WORLD(", "wgpu_anim_world_matrix(")
        .replace("PREVIOUS(", "wgpu_anim_previous_position(");
    let (module, _) = shaders::validate(&format!("{user}\n{}", binding.wgsl())).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(binding_of(&module, "wgpu_anim_palettes"), Some((2, 5)));
    assert_eq!(binding_of(&module, "wgpu_anim_instances"), Some((2, 6)));
    assert_eq!(binding_of(&module, "wgpu_anim_previous_palettes"), Some((2, 7)));
    assert_eq!(binding_of(&module, "wgpu_anim_dual_palettes"), Some((2, 8)));
    assert_eq!(binding_of(&module, "wgpu_anim_previous_dual_palettes"), Some((2, 9)));
    // The vertex inputs at `location..location + 5`, in `SkinVertex::attributes` order.
    let vertex = module
        .types
        .iter()
        .find(|(_, t)| t.name.as_deref() == Some("wgpu_anim_Vertex"))
        .map(|(_, t)| &t.inner);
    let Some(naga::TypeInner::Struct { members, .. }) = vertex else {
        panic!("no wgpu_anim_Vertex struct");
    };
    let locations: Vec<u32> = members
        .iter()
        .filter_map(|m| match m.binding {
            Some(naga::Binding::Location { location, .. }) => Some(location),
            _ => None,
        })
        .collect();
    let attributes: Vec<u32> = binding.vertex_attributes().iter().map(|a| a.shader_location).collect();
    assert_eq!(locations, attributes);
    assert_eq!(locations, [3, 4, 5, 6, 7]);
    // Without `previous` and `dual_quaternion`, neither binding.
    let plain = binding.with_previous(false).with_dual_quaternion(false).wgsl();
    let (module, _) = shaders::validate(&plain).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(binding_of(&module, "wgpu_anim_previous_palettes"), None);
    assert_eq!(binding_of(&module, "wgpu_anim_dual_palettes"), None);
    // Rigid dual quaternions (a block nested in the dual-quaternion one): the same bindings,
    // and no stretch read.
    let rigid = binding.with_rigid(true).wgsl();
    let (module, _) = shaders::validate(&rigid).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(binding_of(&module, "wgpu_anim_dual_palettes"), Some((2, 8)));
    let stretch = "a.stretch_diagonal * weights.x";
    assert!(!rigid.contains(stretch) && binding.wgsl().contains(stretch));
    for (b, defs) in [(binding, 1), (binding.with_rigid(true), 2)] {
        let names: Vec<String> = b.shader_defs().into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names
                .iter()
                .filter(|n| n.starts_with("WGPU_ANIM_DUAL_") && !n.ends_with("_BINDING"))
                .count(),
            defs,
            "{names:?}"
        );
    }

    // Imported with naga_oil.
    use naga_oil::compose::{ComposableModuleDescriptor, Composer, NagaModuleDescriptor};
    let defs: std::collections::HashMap<_, _> = binding.shader_defs().into_iter().collect();
    let mut composer = Composer::default();
    let added = composer.add_composable_module(ComposableModuleDescriptor {
        source: shaders::SKINNING_MODULE,
        file_path: "skinning_module.wgsl",
        shader_defs: defs.clone(),
        ..Default::default()
    });
    if let Err(e) = added {
        panic!("{}", e.emit_to_string(&composer));
    }
    let user = format!(
        "#import wgpu_anim::skinning::{{wgpu_anim_PageInstance, wgpu_anim_skin, wgpu_anim_skin_with_tangent, wgpu_anim_world_matrix, wgpu_anim_previous_position}}\n{}",
        USER_SHADER
            .replace("SKIN_WITH_TANGENT(", "wgpu_anim_skin_with_tangent(")
            .replace("SKIN(", "wgpu_anim_skin(")
            .replace("WORLD(", "wgpu_anim_world_matrix(")
            .replace("PREVIOUS(", "wgpu_anim_previous_position(")
    );
    let made = composer.make_naga_module(NagaModuleDescriptor {
        source: &user,
        file_path: "user.wgsl",
        shader_defs: defs,
        ..Default::default()
    });
    let module = made.unwrap_or_else(|e| panic!("{}", e.emit_to_string(&composer)));
    naga::valid::Validator::new(
        naga::valid::ValidationFlags::all(),
        naga::valid::Capabilities::default(),
    )
    .validate(&module)
    .unwrap();
    assert_eq!(binding_of(&module, "wgpu_anim_palettes"), Some((2, 5)));
    assert_eq!(binding_of(&module, "wgpu_anim_previous_palettes"), Some((2, 7)));
}

/// A call ported from 0.1.0 — the instance as a bare `u32`, as `wgpu_anim_skin` took it (and as
/// the older `skin_vertex` took a joint offset) — fails at shader creation instead of drawing
/// garbage; the same call with `wgpu_anim_PageInstance` validates.
#[test]
fn a_skinning_call_with_a_bare_u32_instance_does_not_validate() {
    let module = SkinBinding::default().with_previous(true).wgsl();
    let shader = |body: &str| {
        format!(
            "{module}\n@vertex fn main(v: wgpu_anim_Vertex, @builtin(instance_index) i: u32) -> @builtin(position) vec4<f32> {{\n{body}\n}}"
        )
    };
    let now = "let k = wgpu_anim_PageInstance(i);
        let s = wgpu_anim_skin(k, v.joints, v.weights, v.position, v.normal);
        let t = wgpu_anim_skin_with_tangent(k, v.joints, v.weights, v.position, v.normal, vec4<f32>(1.0, 0.0, 0.0, 1.0));
        let m = wgpu_anim_skin_matrix(k, v.joints, v.weights);
        let p = wgpu_anim_previous_position(k, v.joints, v.weights, v.position);
        return wgpu_anim_world_matrix(k) * vec4<f32>(s.position + t.position + p + m.x.xyz, 1.0) * wgpu_anim_tint(k).a;";
    shaders::validate(&shader(now)).unwrap_or_else(|e| panic!("{e}"));
    let old = [
        // 0.1.0's call, with its tangent.
        "let s = wgpu_anim_skin(i, v.joints, v.weights, v.position, v.normal, vec4<f32>(1.0, 0.0, 0.0, 1.0));
        return vec4<f32>(s.position, 1.0);",
        // The old skin_vertex's joint offset, renamed only.
        "let s = wgpu_anim_skin(wgpu_anim_instances[i].joint_offset, v.joints, v.weights, v.position, v.normal);
        return vec4<f32>(s.position, 1.0);",
        "let m = wgpu_anim_skin_matrix(i, v.joints, v.weights); return m.x;",
        "return vec4<f32>(wgpu_anim_previous_position(i, v.joints, v.weights, v.position), 1.0);",
        "return wgpu_anim_world_matrix(i) * vec4<f32>(v.position, 1.0);",
        "return vec4<f32>(wgpu_anim_world(i).x.xyz, 1.0);",
        "return wgpu_anim_tint(i);",
    ];
    for body in old {
        assert!(shaders::validate(&shader(body)).is_err(), "validates: {body}");
    }
}

#[test]
fn the_skinning_module_reads_the_instance_fields_where_rust_writes_them() {
    use std::mem::offset_of;
    use wgpu_anim::layout::GpuInstance;
    // As plain text, and composed and written back as the built-in renderer's shader is.
    let sources = [SkinBinding::default().wgsl(), built_in_skin_source()];
    for source in &sources {
        let (module, _) = shaders::validate(source).unwrap();
        let (size, fields) = struct_layout(&module, "wgpu_anim_Instance");
        let at = |name: &str| fields.iter().find(|(n, _)| n == name).map(|(_, o)| *o as usize);
        assert_eq!(size as usize, size_of::<GpuInstance>());
        assert_eq!(at("joint_offset"), Some(offset_of!(GpuInstance, joint_offset)));
        assert_eq!(at("world"), Some(offset_of!(GpuInstance, world)));
        assert_eq!(at("tint"), Some(offset_of!(GpuInstance, tint)));
        let (affine, _) = struct_layout(&module, "wgpu_anim_Affine");
        assert_eq!(affine as usize, size_of::<Affine>());
    }
}
