//! Skinning in a shader of the user's own: the `wgpu_anim::skinning` module, bound with
//! `SkinBinding`, skins on the GPU what the CPU mirror skins from the same palette.
//!
//! Tolerance: 1e-5 relative to 1 + |expected| on positions and normals (four matrix rows summed
//! in the same order; FMA contraction may differ).

mod common;

use glam::{Mat4, Quat, Vec3, Vec4};
use wgpu_anim::gpu::{SkinBinding, Skinning, read_buffer};
use wgpu_anim::mesh::SkinVertex;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, cpu, mannequin};

/// The probes' inputs: the mesh's vertices as words (`SkinVertex`, 14 words), the output and the
/// vertex count; `vertex(v)` unpacks vertex `v`.
const PROBE_INPUTS: &str = "
@group(0) @binding(10) var<storage, read> vertex_words: array<u32>;
@group(0) @binding(11) var<storage, read_write> skinned: array<vec4<f32>>;
@group(0) @binding(12) var<uniform> counts: vec4<u32>;

fn f(w: u32) -> f32 { return bitcast<f32>(vertex_words[w]); }
fn joints_of(v: u32) -> vec4<u32> {
    let j01 = vertex_words[v * 14u + 8u];
    let j23 = vertex_words[v * 14u + 9u];
    return vec4<u32>(j01 & 0xffffu, j01 >> 16u, j23 & 0xffffu, j23 >> 16u);
}
fn weights_of(v: u32) -> vec4<f32> {
    let w = v * 14u;
    return vec4<f32>(f(w + 10u), f(w + 11u), f(w + 12u), f(w + 13u));
}
fn position_of(v: u32) -> vec3<f32> { return vec3<f32>(f(v * 14u), f(v * 14u + 1u), f(v * 14u + 2u)); }
fn normal_of(v: u32) -> vec3<f32> { return vec3<f32>(f(v * 14u + 3u), f(v * 14u + 4u), f(v * 14u + 5u)); }
";

/// Skins every vertex for every instance with the module, in a compute pass (the module is
/// stage-agnostic; only `SkinBinding::layout_entries` says vertex): per vertex and instance, the
/// model-space position, normal and tangent and the world-space position (with the tangent),
/// then the position and normal without it.
const PROBE: &str = "
@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    let instance = wgpu_anim_PageInstance(id.y);
    if (v >= counts.x) { return; }
    let s = wgpu_anim_skin_with_tangent(instance, joints_of(v), weights_of(v), position_of(v), normal_of(v), vec4<f32>(0.0, 0.0, 1.0, -1.0));
    let world = wgpu_anim_world_matrix(instance) * vec4<f32>(s.position, 1.0);
    let plain = wgpu_anim_skin(instance, joints_of(v), weights_of(v), position_of(v), normal_of(v));
    let k = (id.y * counts.x + v) * 6u;
    skinned[k] = vec4<f32>(s.position, 1.0);
    skinned[k + 1u] = vec4<f32>(s.normal, 0.0);
    skinned[k + 2u] = s.tangent;
    skinned[k + 3u] = world;
    skinned[k + 4u] = vec4<f32>(plain.position, 1.0);
    skinned[k + 5u] = vec4<f32>(plain.normal, 0.0);
}
";

/// Per vertex and instance: this frame's model-space position and the previous frame's.
const MOTION_PROBE: &str = "
@compute @workgroup_size(64)
fn probe(@builtin(global_invocation_id) id: vec3<u32>) {
    let v = id.x;
    let instance = wgpu_anim_PageInstance(id.y);
    if (v >= counts.x) { return; }
    let s = wgpu_anim_skin(instance, joints_of(v), weights_of(v), position_of(v), normal_of(v));
    let k = (id.y * counts.x + v) * 2u;
    skinned[k] = vec4<f32>(s.position, 1.0);
    skinned[k + 1u] = vec4<f32>(wgpu_anim_previous_position(instance, joints_of(v), weights_of(v), position_of(v)), 1.0);
}
";

/// Runs `main` (WGSL entry point `probe`, after the skinning module for `binding`) over every
/// vertex of the mannequin mesh (x) and every instance (y); returns `outputs` vec4s per vertex
/// and instance, instance-major.
fn run_probe(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    animator: &Animator,
    binding: SkinBinding,
    main: &str,
    outputs: u64,
) -> Vec<Vec4> {
    use wgpu::util::DeviceExt;
    let vertices = mesh_vertices();
    let source = format!("{}\n{PROBE_INPUTS}\n{main}", binding.wgsl());
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some("probe"),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some("probe"),
        layout: None,
        module: &module,
        entry_point: Some("probe"),
        compilation_options: Default::default(),
        cache: None,
    });
    let words = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::STORAGE,
    });
    let n = vertices.len() as u32;
    let counts = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: bytemuck::cast_slice(&[n, 0, 0, 0]),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let instances = animator.controller().instance_count() as u32;
    let out_len = u64::from(n) * u64::from(instances) * outputs;
    let out = device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size: out_len * 16,
        usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        mapped_at_creation: false,
    });
    fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: buffer.as_entire_binding(),
        }
    }
    let mut entries = vec![
        entry(binding.palette, animator.page_palette_buffer(0).unwrap()),
        entry(binding.instances(), animator.page_instance_buffer(0).unwrap()),
        entry(10, &words),
        entry(11, &out),
        entry(12, &counts),
    ];
    if binding.previous {
        entries.push(entry(
            binding.previous_palette(),
            animator.page_previous_palette_buffer(0).unwrap(),
        ));
    }
    if binding.dual_quaternion {
        // A section of the palette buffer: bound as the animator gives it.
        entries.push(wgpu::BindGroupEntry {
            binding: binding.dual_palette(),
            resource: wgpu::BindingResource::Buffer(animator.page_dual_palette_buffer(0).unwrap()),
        });
    }
    if binding.dual_quaternion && binding.previous {
        entries.push(entry(
            binding.previous_dual_palette(),
            animator.page_previous_dual_palette_buffer(0).unwrap(),
        ));
    }
    let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &pipeline.get_bind_group_layout(0),
        entries: &entries,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let mut pass = encoder.begin_compute_pass(&Default::default());
        pass.set_pipeline(&pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(n.div_ceil(64), instances, 1);
    }
    queue.submit([encoder.finish()]);
    read_buffer(device, queue, &out, 0, out_len).unwrap()
}

fn mesh_vertices() -> Vec<SkinVertex> {
    let (lib, skeleton, _) = mannequin::library();
    mannequin::mesh(&lib.skeletons()[skeleton.index() as usize]).gpu_vertices()
}

/// Three posed instances, one scaled non-uniformly; their world transforms.
fn crowd(device: &wgpu::Device) -> (Animator, [Mat4; 3]) {
    let (lib, _, clips) = mannequin::library();
    let mut animator = Animator::new(device, &lib, &AnimatorDesc::default()).unwrap();
    let worlds = [
        Mat4::IDENTITY,
        Mat4::from_scale_rotation_translation(
            Vec3::new(1.5, 0.5, 1.0),
            Quat::from_rotation_y(0.7),
            Vec3::new(3.0, 0.0, -2.0),
        ),
        Mat4::from_rotation_translation(Quat::from_rotation_x(-0.4), Vec3::new(-1.0, 2.0, 0.5)),
    ];
    for (k, world) in worlds.iter().enumerate() {
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(clips[k % clips.len()])
                    .with_time(0.3 * k as f32)
                    .with_world(*world),
            )
            .unwrap();
    }
    (animator, worlds)
}

/// The same crowd on an animator that keeps dual quaternions: linear, dual-quaternion and 40 %
/// dual-quaternion skinning, one each.
fn mixed_crowd(device: &wgpu::Device) -> (Animator, [Skinning; 3]) {
    let (lib, _, clips) = mannequin::library();
    let desc = AnimatorDesc::default().with_dual_quaternion(true);
    let mut animator = Animator::new(device, &lib, &desc).unwrap();
    let skinning = [Skinning::Linear, Skinning::DualQuaternion, Skinning::Blend(0.4)];
    for (k, skinning) in skinning.into_iter().enumerate() {
        animator
            .controller_mut()
            .add_instance(
                &InstanceDesc::new(clips[1])
                    .with_time(0.3 * k as f32)
                    .with_skinning(skinning),
            )
            .unwrap();
    }
    (animator, skinning)
}

fn frame(device: &wgpu::Device, queue: &wgpu::Queue, animator: &mut Animator, dt: f32) {
    animator.prepare(queue, dt);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder).unwrap();
    queue.submit([encoder.finish()]);
}

#[test]
fn the_skinning_module_skins_what_the_cpu_mirror_skins() {
    let (device, queue) = common::device();
    let (mut animator, worlds) = crowd(&device);
    for dt in [0.0, 0.1] {
        frame(&device, &queue, &mut animator, dt);
    }
    let vertices = mesh_vertices();
    let binding = SkinBinding::new(0, 0);
    let gpu = run_probe(&device, &queue, &animator, binding, PROBE, 6);

    let (_, pose) = animator.read_back(&device, &queue).unwrap();
    let close = |a: Vec4, b: Vec4| (a - b).abs().max_element() <= 1e-5 * (1.0 + b.abs().max_element());
    let (mut moved, mut off_by_one) = (0, 0);
    for (i, inst) in animator.controller().instances().iter().enumerate() {
        for (v, vertex) in vertices.iter().enumerate() {
            let cpu_point = cpu::skin_vertex(&pose.palette, inst.joint_offset, vertex).unwrap();
            let k = (i * vertices.len() + v) * 6;
            let world = worlds[i] * Vec4::from((cpu_point.position.truncate(), 1.0));
            assert!(
                close(gpu[k], cpu_point.position) && close(gpu[k + 1], cpu_point.normal) && close(gpu[k + 3], world),
                "instance {i}, vertex {v}: GPU {:?} {:?} {:?}, CPU {:?} {:?} {world:?}",
                gpu[k],
                gpu[k + 1],
                gpu[k + 3],
                cpu_point.position,
                cpu_point.normal
            );
            // The tangent is unit length, its w passed through.
            assert!((gpu[k + 2].truncate().length() - 1.0).abs() < 1e-5 && gpu[k + 2].w == -1.0);
            // Without a tangent: the same position and normal.
            assert_eq!(
                (gpu[k + 4], gpu[k + 5]),
                (gpu[k], gpu[k + 1]),
                "instance {i}, vertex {v}"
            );
            moved += usize::from((cpu_point.position.truncate() - Vec3::from(vertex.position)).length() > 1e-3);
            // The comparison fails against the palette one joint off (first instance).
            if i == 0 {
                let shifted = cpu::skin_vertex(&pose.palette, inst.joint_offset + 1, vertex).unwrap();
                off_by_one += usize::from(!close(gpu[k], shifted.position));
            }
        }
    }
    assert!(
        moved > vertices.len(),
        "the poses move the mesh ({moved} vertices moved)"
    );
    assert!(
        off_by_one > vertices.len() / 2,
        "{off_by_one} of {} vertices differ from the palette one joint off",
        vertices.len()
    );
}

/// A crowd of linear, dual-quaternion and blended instances in one frame: the module's
/// `wgpu_anim_skin` and `wgpu_anim_skin_with_tangent` skin each as its `Skinning` says, as the
/// CPU mirror (`cpu::skin_blended`) skins from the same palettes and dual quaternions.
#[test]
fn the_skinning_module_skins_each_instance_as_its_skinning_says() {
    let (device, queue) = common::device();
    let (mut animator, skinning) = mixed_crowd(&device);
    for dt in [0.0, 0.1] {
        frame(&device, &queue, &mut animator, dt);
    }
    let vertices = mesh_vertices();
    let (_, pose) = animator.read_back(&device, &queue).unwrap();
    // Two-phase, and rigid (the mannequin has no scale: its stretches are the identity to within
    // an ulp, so the mirror's two-phase skinning stands for both).
    assert!(!animator.controller().library().has_scale());
    for rigid in [false, true] {
        let binding = SkinBinding::BUILT_IN.with_dual_quaternion(true).with_rigid(rigid);
        assert_eq!(SkinBinding::BUILT_IN.for_animator(&animator), binding.with_rigid(true));
        let gpu = run_probe(&device, &queue, &animator, binding, PROBE, 6);
        let close = |a: Vec4, b: Vec4| (a - b).abs().max_element() <= 1e-5 * (1.0 + b.abs().max_element());
        let mut unlike_linear = [0; 3];
        for (i, inst) in animator.controller().instances().iter().enumerate() {
            let amount = skinning[i].dual_amount().unwrap();
            assert_eq!(animator.controller().dual_quaternion_amount(i), Some(amount));
            for (v, vertex) in vertices.iter().enumerate() {
                let expected = cpu::skin_blended(
                    &pose.palette,
                    &pose.dual,
                    inst.joint_offset,
                    amount,
                    std::slice::from_ref(vertex),
                )
                .unwrap()[0];
                let linear = cpu::skin_vertex(&pose.palette, inst.joint_offset, vertex).unwrap();
                let k = (i * vertices.len() + v) * 6;
                assert!(
                    close(gpu[k], expected.position) && close(gpu[k + 1], expected.normal),
                    "rigid {rigid}, instance {i} ({:?}), vertex {v}: GPU {:?} {:?}, CPU {:?} {:?}",
                    skinning[i],
                    gpu[k],
                    gpu[k + 1],
                    expected.position,
                    expected.normal
                );
                assert_eq!(
                    (gpu[k + 4], gpu[k + 5]),
                    (gpu[k], gpu[k + 1]),
                    "instance {i}, vertex {v}"
                );
                unlike_linear[i] += usize::from(!close(gpu[k], linear.position));
            }
        }
        // Linear instances skin linearly; the others, where joints blend, do not.
        assert_eq!(unlike_linear[0], 0);
        assert!(
            unlike_linear[1] > 50 && unlike_linear[2] > 50,
            "vertices unlike linear blend skinning: {unlike_linear:?}"
        );
        // Linear instances have no dual quaternions written; the others do.
        let written = |i: usize| {
            let inst = animator.controller().instances()[i];
            pose.dual[inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize]
                .iter()
                .all(|d| d.real.length() > 0.999)
        };
        assert!(!written(0) && written(1) && written(2));
    }
}

#[test]
fn previous_positions_are_the_positions_of_the_frame_before() {
    let (device, queue) = common::device();
    let (animator, _) = crowd(&device);
    let binding = SkinBinding::new(0, 0).with_previous(true);
    check_previous_positions(&device, &queue, animator, binding);
    // Linear, dual-quaternion and blended characters, two-phase and rigid: last frame's dual
    // quaternions are kept too, and the previous positions skin as each character skins.
    for rigid in [false, true] {
        let (animator, _) = mixed_crowd(&device);
        let binding = binding.with_dual_quaternion(true).with_rigid(rigid);
        check_previous_positions(&device, &queue, animator, binding);
    }
}

/// Keeps `animator`'s previous palettes and checks, frame by frame, that the previous positions
/// `binding`'s module gives are the positions of the frame before; then turns them off.
fn check_previous_positions(device: &wgpu::Device, queue: &wgpu::Queue, mut animator: Animator, binding: SkinBinding) {
    let vertices = mesh_vertices().len();
    // Off by default: no buffer, and no bind group with `previous`.
    assert!(animator.page_previous_palette_buffer(0).is_none());
    animator.keep_previous_palettes(device, true).unwrap();
    assert_eq!(
        animator.page_previous_dual_palette_buffer(0).is_some(),
        animator.controller().dual_quaternion()
    );
    // The first frame kept: no motion, the previous positions are this frame's.
    frame(device, queue, &mut animator, 0.0);
    let first = run_probe(device, queue, &animator, binding, MOTION_PROBE, 2);
    let same = |a: Vec4, b: Vec4| (a - b).abs().max_element() <= 1e-6 * (1.0 + b.abs().max_element());
    for k in 0..first.len() / 2 {
        assert!(
            same(first[2 * k + 1], first[2 * k]),
            "{binding:?}, vertex-instance {k}: motion on the first frame"
        );
    }
    // Every later frame: the previous positions are the positions of the frame before.
    let mut before = first;
    for (k, dt) in [0.1, 0.05, 0.2].into_iter().enumerate() {
        if k == 1 && animator.controller().dual_quaternion() {
            // Switched: the first linear instance to dual quaternions, the dual-quaternion one
            // to linear. This frame's previous positions still skin as the frame before.
            animator
                .controller_mut()
                .set_skinning(0, Skinning::DualQuaternion)
                .unwrap();
            animator.controller_mut().set_skinning(1, Skinning::Linear).unwrap();
        }
        frame(device, queue, &mut animator, dt);
        let now = run_probe(device, queue, &animator, binding, MOTION_PROBE, 2);
        let mut moved = 0;
        for k in 0..now.len() / 2 {
            assert!(
                same(now[2 * k + 1], before[2 * k]),
                "{binding:?}, vertex {} of instance {}: previous {:?}, the frame before {:?}",
                k % vertices,
                k / vertices,
                now[2 * k + 1],
                before[2 * k]
            );
            moved += usize::from((now[2 * k] - before[2 * k]).length() > 1e-4);
        }
        assert!(
            moved > now.len() / 4,
            "the crowd moves ({moved} vertex positions moved)"
        );
        before = now;
    }
    // Turned off: the buffers go.
    animator.keep_previous_palettes(device, false).unwrap();
    assert!(animator.page_previous_palette_buffer(0).is_none());
    assert!(animator.page_previous_dual_palette_buffer(0).is_none());
}

/// What `SkinBinding` is given that does not fit — a layout without its entries or with other
/// ones, pages or previous palettes the animator does not have, entries of yours at its
/// bindings, buffers that cannot be bound, more bind groups than pages — is an error naming what
/// is wrong, not a panic in wgpu's error handler; the device still works after.
#[test]
fn wrong_layouts_entries_and_bind_groups_are_errors_not_panics() {
    use wgpu::util::DeviceExt;
    use wgpu_anim::Error;
    let (device, queue) = common::device();
    let (animator, _) = crowd(&device);
    let skin = SkinBinding::new(0, 1);
    let layout = |entries: &[wgpu::BindGroupLayoutEntry]| {
        device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: None, entries })
    };
    let refused = |result: wgpu_anim::Result<Vec<wgpu::BindGroup>>, case: &str| match result {
        Err(e @ Error::Refused { .. }) => {
            assert!(e.to_string().contains("skinning bind group of page 0"), "{case}: {e}")
        }
        Err(e) => panic!("{case}: {e}, not refused by the device"),
        Ok(_) => panic!("{case}: made bind groups"),
    };
    let mistaken = |result: wgpu_anim::Result<Vec<wgpu::BindGroup>>, case: &str, says: &str| match result {
        Err(e @ Error::Binding { .. }) => assert!(e.to_string().contains(says), "{case}: {e}"),
        Err(e) => panic!("{case}: {e}, not a binding error"),
        Ok(_) => panic!("{case}: made bind groups"),
    };

    // Layouts only the device can check.
    let uniform = |binding| wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::VERTEX,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    };
    let empty = layout(&[]);
    refused(skin.bind_groups(&device, &empty, &animator, &[]), "an empty layout");
    let elsewhere = layout(&skin.with_palette(4).layout_entries());
    refused(
        skin.bind_groups(&device, &elsewhere, &animator, &[]),
        "the entries at other bindings",
    );
    let uniforms = layout(&[uniform(1), uniform(2)]);
    refused(skin.bind_groups(&device, &uniforms, &animator, &[]), "uniform entries");
    let with_camera = layout(&[&[uniform(0)][..], &skin.layout_entries()].concat());
    refused(
        skin.bind_groups(&device, &with_camera, &animator, &[]),
        "no entry for the layout's camera",
    );
    let ours = skin.bind_group_layout(&device).unwrap();
    let previous = skin.with_previous(true);
    let three = previous.bind_group_layout(&device).unwrap();
    let mut kept = crowd(&device).0;
    kept.keep_previous_palettes(&device, true).unwrap();
    refused(
        skin.bind_groups(&device, &three, &kept, &[]),
        "two entries for a layout of three",
    );

    // What the CPU checks.
    mistaken(
        previous.bind_groups(&device, &three, &animator, &[]),
        "previous palettes not kept",
        "keeps no previous palettes",
    );
    let e = skin.bind_group(&device, &ours, &animator, 9, &[]).expect_err("page 9");
    assert!(
        matches!(e, Error::Binding { .. }) && e.to_string().contains("no page 9"),
        "{e}"
    );
    let far = skin.with_palette(5000);
    mistaken(
        far.bind_groups(&device, &ours, &animator, &[]),
        "binding 5000",
        "max_bindings_per_bind_group",
    );
    let camera = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &[0; 64],
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let vertices = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &[0; 64],
        usage: wgpu::BufferUsages::VERTEX,
    });
    fn entry(binding: u32, buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindGroupEntry<'_> {
        wgpu::BindGroupEntry {
            binding,
            resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                buffer,
                offset,
                size: wgpu::BufferSize::new(size),
            }),
        }
    }
    let cases = [
        (
            vec![entry(2, &camera, 0, 64)],
            "at binding 2, which is a skinning binding",
        ),
        (
            vec![entry(0, &camera, 0, 64), entry(0, &camera, 0, 64)],
            "as an extra entry before it",
        ),
        (vec![entry(0, &vertices, 0, 64)], "neither UNIFORM nor STORAGE"),
        (vec![entry(0, &camera, 32, 64)], "bytes 32..96 of a buffer of 64 bytes"),
        (vec![entry(0, &camera, 8, u64::MAX)], "past u64::MAX"),
    ];
    for (extra, says) in &cases {
        mistaken(skin.bind_groups(&device, &with_camera, &animator, extra), says, says);
    }

    // More bind groups than pages: nothing drawn, an error.
    let groups = skin.bind_groups(&device, &ours, &animator, &[]).unwrap();
    let two = [groups[0].clone(), groups[0].clone()];
    let mesh = {
        let lib = animator.controller().library();
        let skeleton = lib.skeleton_at(0).unwrap();
        wgpu_anim::gpu::MeshBuffers::new(&device, lib, skeleton, &mannequin::mesh(&lib.skeletons()[0])).unwrap()
    };
    let target = wgpu_anim::gpu::OffscreenTarget::new(&device, 8, 8).unwrap();
    let mut encoder = device.create_command_encoder(&Default::default());
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu::Color::BLACK);
        let e = skin
            .draw(&mut pass, &two, &animator, &mesh, 0..3)
            .expect_err("two bind groups, one page");
        assert!(
            matches!(e, Error::Binding { .. }) && e.to_string().contains("2 bind groups for an animator of 1 pages"),
            "{e}"
        );
    }
    queue.submit([encoder.finish()]);

    // The device still works: the right layout, with a camera entry of one's own.
    let groups = skin
        .bind_groups(&device, &with_camera, &animator, &[entry(0, &camera, 0, 64)])
        .unwrap();
    assert_eq!(groups.len(), animator.controller().page_count());
    assert_eq!(
        previous.bind_groups(&device, &three, &kept, &[]).unwrap().len(),
        kept.controller().page_count()
    );
}
