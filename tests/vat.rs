//! Vertex animation textures as the far LOD: a culling animator marks the small characters that
//! play one baked clip alone for their VAT, and a VAT draw plays it in the vertex stage. Checked
//! against an animator that skins everyone, frame by frame:
//! - clocks, root motion and events stay exact for every character;
//! - the marks and the lists (evaluated, drawn skinned, drawn by VAT) equal the CPU mirror's;
//!   characters played by VAT are not evaluated (no sample..palette work);
//! - a character's VAT pose equals the mirror's playback (`Vat::vertex`) of the clip time the
//!   clock left, and the full run's skinned pose within the bake's reported error;
//! - switching between the VAT and the skinned mesh is seamless: on the frame a character leaves
//!   its VAT it is evaluated and its palette equals the full run's bit for bit;
//! - a wrong clip time in the mirror fails the comparison;
//! - a VAT draw renders what skinning renders, and the renderer's LOD tint colours it violet;
//! - bad input is refused.

mod common;

use glam::{Mat4, Quat, Vec3};
use wgpu_anim::cpu::{self, SkinnedPoint};
use wgpu_anim::gpu::{Camera, GpuVat, Transition};
use wgpu_anim::layout::{GpuFrame, GpuInstance, MARK_DRAWN, MARK_ENTERED, MARK_EVALUATE, MARK_VAT};
use wgpu_anim::offline::vat::{VatDesc, bake_vat};
use wgpu_anim::shaders::Resource;
use wgpu_anim::testing::{play_vat_on_gpu, skin_on_gpu};
use wgpu_anim::vat::Vat;
use wgpu_anim::{Affine, Animator, AnimatorDesc, InstanceDesc, mannequin};

const COUNT: usize = 48;

fn animator(device: &wgpu::Device, lib: &wgpu_anim::AnimationLibrary, culling: bool) -> Animator {
    let desc = AnimatorDesc::default()
        .with_max_instances(COUNT as u32)
        .with_culling(culling);
    Animator::new(device, lib, &desc).unwrap()
}

fn step(device: &wgpu::Device, queue: &wgpu::Queue, a: &mut Animator, dt: f32) {
    a.prepare(queue, dt);
    let mut e = device.create_command_encoder(&Default::default());
    a.encode(&mut e).unwrap();
    queue.submit([e.finish()]);
}

fn view() -> Mat4 {
    Camera::look_at(Vec3::new(0.0, 30.0, 60.0), Vec3::ZERO, 0.8, 1.5, 0.5, 300.0).view_proj
}

/// The largest distance between two skinned meshes' positions, and between their normals.
fn distance(a: &[SkinnedPoint], b: &[SkinnedPoint]) -> (f32, f32) {
    a.iter().zip(b).fold((0.0f32, 0.0f32), |(p, n), (a, b)| {
        (
            p.max((a.position - b.position).truncate().length()),
            n.max((a.normal - b.normal).truncate().length()),
        )
    })
}

/// The mannequin's library with root motion, its mesh and the mesh's VAT of every clip.
fn baked() -> (
    wgpu_anim::AnimationLibrary,
    wgpu_anim::SkeletonId,
    Vec<wgpu_anim::ClipId>,
    wgpu_anim::SkinnedMesh,
    Vat,
) {
    let (lib, skeleton, clips) = mannequin::library_with_root_motion(mannequin::mannequin().skeleton);
    let mesh = mannequin::mesh(&lib.skeletons()[skeleton.index() as usize]);
    let vat = bake_vat(&lib, skeleton, &mesh, &VatDesc::default(), |_, _, _| {}).unwrap();
    (lib, skeleton, clips, mesh, vat)
}

#[test]
fn vat_characters_play_their_clip_within_the_reported_error_and_switch_seamlessly() {
    let (device, queue) = common::device();
    let (lib, skeleton, clips, mesh, vat) = baked();
    let r = &vat.report;
    eprintln!(
        "VAT of {} clips, {} frames of {} vertices, {} bytes: within {:.2e} m and {:.2}° of skinning",
        vat.clips.len(),
        vat.frame_count(),
        vat.vertex_count,
        vat.gpu_bytes(lib.clips().len() as u32),
        r.max_position_error,
        r.max_normal_error_degrees
    );
    assert!(r.max_position_error > 0.0 && r.max_position_error < 0.05, "{r:?}");
    let gpu_vat = GpuVat::new(&device, &lib, &vat).unwrap();
    // The fused path keeps its blend lists out of memory: its marks must be the staged path's.
    let staged = play_and_check(&device, &queue, None, (&lib, skeleton, &clips, &mesh), &vat, &gpu_vat);
    play_and_check(
        &device,
        &queue,
        Some(&staged),
        (&lib, skeleton, &clips, &mesh),
        &vat,
        &gpu_vat,
    );
}

/// The crowd of [`vat_characters_play_their_clip_within_the_reported_error_and_switch_seamlessly`]
/// on the staged path (its marks against the mirror's), or on the fused one (`staged`: its marks
/// against the staged path's); returns the marks of every frame.
fn play_and_check(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    staged: Option<&[Vec<u32>]>,
    (lib, skeleton, clips, mesh): (
        &wgpu_anim::AnimationLibrary,
        wgpu_anim::SkeletonId,
        &[wgpu_anim::ClipId],
        &wgpu_anim::SkinnedMesh,
    ),
    vat: &Vat,
    gpu_vat: &GpuVat,
) -> Vec<Vec<u32>> {
    let (device, queue) = (device.clone(), queue.clone());
    let r = &vat.report;
    let fused = staged.is_some();
    let mut all_marks = Vec::new();
    let (mut culled, mut full) = (animator(&device, lib, true), animator(&device, lib, false));
    culled.set_fused(fused).unwrap();
    full.set_fused(fused).unwrap();
    let tree = lib.blend().tree_id(mannequin::LOCOMOTION);
    for i in 0..COUNT {
        let world = Mat4::from_rotation_translation(
            Quat::from_rotation_y(i as f32),
            Vec3::new((i % 8) as f32 * 4.0 - 14.0, 0.0, (i / 8) as f32 * 4.0 - 10.0),
        );
        let desc = match tree {
            // Every eighth plays a blend tree, which no VAT holds.
            Some(t) if i % 8 == 3 => InstanceDesc::tree(t, [0.5, 0.0, 0.0, 0.0]),
            _ => InstanceDesc::new(clips[i % clips.len()]),
        }
        .with_time(i as f32 * 0.17)
        .with_rate(0.8 + 0.05 * (i % 7) as f32)
        .with_world(world);
        for a in [&mut culled, &mut full] {
            a.controller_mut().add_instance(&desc).unwrap();
            if i % 3 != 0 {
                a.controller_mut().set_root_motion(i, true).unwrap();
            }
        }
    }
    culled.controller_mut().set_cull_view(Some(view())).unwrap();
    culled.controller_mut().set_vat(skeleton, Some(vat)).unwrap();
    let vertices = mesh.gpu_vertices();
    let (mut vat_frames, mut switched_off, mut switched_on, mut compared) = (0, 0, 0, 0);
    let mut previous = vec![0u32; COUNT];
    for f in 0..30 {
        // VAT for everyone small enough from the start, for no one on frames 10 to 19.
        culled
            .controller_mut()
            .set_vat_size(Some(if (10..20).contains(&f) { 0.0 } else { 1e6 }))
            .unwrap();
        if f == 4 {
            for a in [&mut culled, &mut full] {
                for i in (0..COUNT).step_by(5).filter(|i| i % 8 != 3) {
                    let desc = InstanceDesc::new(clips[(i + 1) % clips.len()]);
                    a.controller_mut()
                        .play(i, &desc, Some(Transition::linear(0.2)))
                        .unwrap();
                }
            }
        }
        step(&device, &queue, &mut culled, 1.0 / 30.0);
        step(&device, &queue, &mut full, 1.0 / 30.0);
        let outputs = culled.read_outputs_page(&device, &queue, 0).unwrap();
        let full_outputs = full.read_outputs_page(&device, &queue, 0).unwrap();
        let marks: Vec<u32> = outputs.iter().map(|o| o.evaluate).collect();
        // Clocks and root motion exact for everyone.
        for (i, (a, b)) in outputs.iter().zip(&full_outputs).enumerate() {
            assert_eq!(
                (a.world, a.delta_translation),
                (b.world, b.delta_translation),
                "fused {fused}, frame {f}, {i}"
            );
        }
        // Marks and lists against the mirror.
        let frame: GpuFrame = culled.frame_uniform(0).unwrap();
        let instances: Vec<GpuInstance> = culled
            .read_page_buffer(&device, &queue, 0, Resource::Instances, 0, COUNT as u64)
            .unwrap();
        let lists = culled.read_blend_lists(&device, &queue).unwrap();
        for i in 0..COUNT {
            if let Some(staged) = staged {
                assert_eq!(marks[i], staged[f][i], "fused, frame {f}, instance {i}: marks");
                continue;
            }
            let want = cpu::cull::marks(&frame, &instances[i], i as u32, &lists[i], previous[i]);
            assert_eq!(marks[i], want, "frame {f}, instance {i}: marks");
            if marks[i] & MARK_VAT != 0 {
                assert_eq!(
                    instances[i].vat_time,
                    cpu::cull::vat_time(&lists[i]),
                    "fused {fused}, frame {f}, {i}"
                );
                assert!(i % 8 != 3, "a blend tree is never played by VAT");
            }
        }
        let (head, listed) = culled.read_visible_page(&device, &queue, 0).unwrap();
        assert_eq!(
            (head, listed.clone()),
            cpu::cull::cull(
                &frame,
                &outputs,
                COUNT as u32,
                culled.character_threads().characters_per_workgroup()
            ),
            "fused {fused}, frame {f}: lists"
        );
        assert!(
            listed.vat.iter().all(|i| !listed.evaluated.contains(i)),
            "VAT characters are not evaluated"
        );
        if (10..20).contains(&f) {
            assert!(
                listed.vat.is_empty(),
                "fused {fused}, frame {f}: no VAT below a size of 0"
            );
        } else if f > 12 && f != 20 {
            // The transitions of frame 4 are over: only the trees are skinned.
            assert_eq!(
                listed.vat.len(),
                COUNT - COUNT / 8,
                "fused {fused}, frame {f}: {:?}",
                listed.vat
            );
        }
        if f == 5 {
            assert!(
                (0..COUNT)
                    .step_by(5)
                    .filter(|i| i % 8 != 3)
                    .all(|i| marks[i] & MARK_VAT == 0),
                "a character in a cross-fade is skinned"
            );
        }
        vat_frames += usize::from(!listed.vat.is_empty());
        // Leaving the VAT: evaluated at once, the full run's palette exactly.
        let full_palettes: Vec<Affine> = full
            .read_page_buffer(
                &device,
                &queue,
                0,
                Resource::Palettes,
                0,
                u64::from(full.controller().page_state(0).unwrap().joints_used),
            )
            .unwrap();
        let palettes: Vec<Affine> = culled
            .read_page_buffer(&device, &queue, 0, Resource::Palettes, 0, full_palettes.len() as u64)
            .unwrap();
        for i in 0..COUNT {
            if previous[i] & MARK_VAT != 0 && marks[i] & MARK_VAT == 0 {
                assert_eq!(
                    marks[i] & (MARK_EVALUATE | MARK_ENTERED | MARK_DRAWN),
                    MARK_EVALUATE | MARK_ENTERED | MARK_DRAWN
                );
                let inst = &instances[i];
                let range = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
                assert_eq!(
                    palettes[range.clone()],
                    full_palettes[range],
                    "fused {fused}, frame {f}, {i}: the switch to skinning"
                );
                switched_off += 1;
            }
            switched_on += usize::from(previous[i] & MARK_VAT == 0 && marks[i] & MARK_VAT != 0 && f > 0);
        }
        // Two VAT characters a frame (more on the switch frames): the GPU's playback against the
        // mirror's and against the full run's skinning.
        let picks: Vec<u32> = if f == 9 || f == 20 {
            listed.vat.clone()
        } else {
            listed.vat.iter().copied().take(2).collect()
        };
        for &i in &picks {
            let i = i as usize;
            let inst = &instances[i];
            let played = play_vat_on_gpu(&device, &queue, &culled, i, gpu_vat).unwrap();
            let mirror: Vec<SkinnedPoint> = (0..vat.vertex_count)
                .map(|v| vat.vertex(inst.vat - 1, inst.vat_time, v).unwrap())
                .collect();
            let (p, n) = distance(&played, &mirror);
            assert!(
                p < 1e-5 && n < 1e-4,
                "fused {fused}, frame {f}, {i}: GPU playback {p} m, {n} from the mirror's"
            );
            let joint_offset = full.controller().instances()[i].joint_offset;
            let skinned = skin_on_gpu(&device, &queue, &full, joint_offset, &vertices).unwrap();
            let (p, _) = distance(&played, &skinned);
            assert!(
                p <= r.max_position_error + 1e-5,
                "fused {fused}, frame {f}, {i}: the VAT is {p} m from skinning, reported {}",
                r.max_position_error
            );
            // The comparison can fail: the mirror a quarter second off.
            if f == 2 {
                let late: Vec<SkinnedPoint> = (0..vat.vertex_count)
                    .map(|v| vat.vertex(inst.vat - 1, inst.vat_time + 0.25, v).unwrap())
                    .collect();
                assert!(distance(&played, &late).0 > 1e-2, "a wrong clip time is caught");
            }
            compared += 1;
        }
        all_marks.push(marks.clone());
        previous = marks;
    }
    eprintln!(
        "{vat_frames} frames with VAT characters, {compared} VAT poses compared, \
         {switched_off} switches to skinning, {switched_on} back"
    );
    assert!(switched_off >= COUNT - COUNT / 8 && switched_on >= COUNT - COUNT / 8);
    all_marks
}

#[test]
fn a_vat_draw_renders_what_skinning_renders() {
    use wgpu_anim::SkinnedRenderer;
    use wgpu_anim::gpu::OffscreenTarget;
    let (device, queue) = common::device();
    let (lib, skeleton, clips, mesh, vat) = baked();
    let (w, h) = (256, 160);
    let camera = Camera::look_at(
        Vec3::new(0.0, 1.5, 7.0),
        Vec3::new(0.0, 0.9, -1.5),
        0.9,
        w as f32 / h as f32,
        0.1,
        100.0,
    );
    let target = OffscreenTarget::new(&device, w, h).unwrap();
    let mut pictures = Vec::new();
    // By VAT, skinned, by VAT tinted violet, by VAT under the renderer's LOD tint (whose colour
    // for a character drawn by its VAT is that violet, shaders/skin.wgsl `tint_of`).
    const VIOLET: [u8; 4] = [170, 110, 220, 255];
    for (vat_on, tint, lod_tint) in [
        (true, [255; 4], false),
        (false, [255; 4], false),
        (true, VIOLET, false),
        (true, [255; 4], true),
    ] {
        let mut a = animator(&device, &lib, vat_on);
        for i in 0..12 {
            let desc = InstanceDesc::new(clips[i % clips.len()])
                .with_time(i as f32 * 0.21)
                .with_world(Mat4::from_translation(Vec3::new(
                    (i % 6) as f32 * 1.6 - 4.0,
                    0.0,
                    (i / 6) as f32 * -3.0,
                )))
                .with_tint(tint);
            a.controller_mut().add_instance(&desc).unwrap();
        }
        let (color, depth) = (OffscreenTarget::COLOR_FORMAT, Some(OffscreenTarget::DEPTH_FORMAT));
        let mut r = SkinnedRenderer::new(&device, &a, skeleton, &mesh, color, depth, 1).unwrap();
        if vat_on {
            let controller = a.controller_mut();
            controller
                .set_bounds(skeleton, lib.mesh_radius(skeleton, &mesh).unwrap())
                .unwrap();
            controller.set_cull_view(Some(camera.view_proj)).unwrap();
            controller.set_vat(skeleton, Some(&vat)).unwrap();
            controller.set_vat_size(Some(1e6)).unwrap();
            r.set_vat(&device, &a, Some(&vat)).unwrap();
        }
        r.set_camera(&queue, &camera);
        r.set_lod_tint(&queue, lod_tint);
        let mut picture = Vec::new();
        for _ in 0..3 {
            a.prepare(&queue, 0.05);
            let mut encoder = device.create_command_encoder(&Default::default());
            a.encode(&mut encoder).unwrap();
            r.encode(&mut encoder, &a);
            {
                let (mut pass, _views) = target.begin_pass(&mut encoder, wgpu::Color::BLACK);
                r.draw_visible(&mut pass, &a).unwrap();
            }
            queue.submit([encoder.finish()]);
            picture = target.read_rgba(&device, &queue).unwrap();
        }
        if vat_on {
            let (head, lists) = a.read_visible_page(&device, &queue, 0).unwrap();
            assert_eq!(
                (head.count, lists.vat.len()),
                (0, 12),
                "everyone by VAT, no one evaluated"
            );
        }
        pictures.push(picture);
    }
    let covered = |p: &[u8]| p.chunks(4).filter(|c| c[..3] != [0, 0, 0]).count();
    let differing = pictures[0]
        .chunks(4)
        .zip(pictures[1].chunks(4))
        .filter(|(a, b)| a.iter().zip(b.iter()).any(|(x, y)| x.abs_diff(*y) > 24))
        .count();
    let (c0, c1) = (covered(&pictures[0]), covered(&pictures[1]));
    eprintln!("VAT picture covers {c0} pixels, skinned {c1}; {differing} differ");
    assert!(c1 > 2000, "the characters are in the picture");
    assert!(c0.abs_diff(c1) < c1 / 50, "coverage {c0} against {c1}");
    assert!(differing < c1 / 25, "{differing} of {c1} pixels differ");
    // The LOD tint colours a character drawn by its VAT violet, and only the colour changes.
    let worst = pictures[2]
        .iter()
        .zip(&pictures[3])
        .map(|(x, y)| x.abs_diff(*y))
        .max()
        .unwrap();
    assert!(worst <= 1, "the LOD tint against violet tints: {worst} apart");
    let white = pictures[0]
        .chunks(4)
        .zip(pictures[3].chunks(4))
        .filter(|(x, y)| x != y)
        .count();
    assert!(
        white > c0 / 2,
        "{white} of {c0} pixels differ from the untinted picture"
    );
}

#[test]
fn bad_vat_input_is_refused() {
    let (device, _queue) = common::device();
    let (lib, skeleton, clips, mesh, vat) = baked();
    let mut plain = animator(&device, &lib, false);
    let e = plain.controller_mut().set_vat_size(Some(0.01)).unwrap_err().to_string();
    assert!(e.contains("does not cull"), "{e}");
    let mut a = animator(&device, &lib, true);
    for size in [-1.0, f32::NAN, f32::INFINITY] {
        let e = a.controller_mut().set_vat_size(Some(size)).unwrap_err().to_string();
        assert!(e.contains("set_vat_size"), "{e}");
    }
    // A VAT whose clip is not the library's.
    let mut renamed = vat.clone();
    renamed.clips[0].name = "not a clip".into();
    let e = a
        .controller_mut()
        .set_vat(skeleton, Some(&renamed))
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a clip"), "{e}");
    let e = GpuVat::new(&device, &lib, &renamed).unwrap_err().to_string();
    assert!(e.contains("not a clip"), "{e}");
    // A VAT whose fields disagree (frames missing from its words): no GPU read past the buffer,
    // no panic in the mirror.
    let mut cut = vat.clone();
    cut.words.truncate(cut.words.len() / 2);
    let e = GpuVat::new(&device, &lib, &cut).unwrap_err().to_string();
    assert!(e.contains("vertex words"), "{e}");
    let last = cut.clips.last().unwrap();
    assert!(cut.vertex(last.clip, last.duration, 0).is_none());
    // A clip given twice.
    let twice = VatDesc {
        clips: vec![clips[0], clips[0]],
        ..VatDesc::default()
    };
    let e = bake_vat(&lib, skeleton, &mesh, &twice, |_, _, _| {})
        .unwrap_err()
        .to_string();
    assert!(e.contains("twice"), "{e}");
    // Another mesh's VAT.
    let mut other = vat.clone();
    other.vertex_count -= 1;
    let format = wgpu_anim::gpu::OffscreenTarget::COLOR_FORMAT;
    a.controller_mut().add_instance(&InstanceDesc::new(clips[0])).unwrap();
    let mut r = wgpu_anim::SkinnedRenderer::new(&device, &a, skeleton, &mesh, format, None, 1).unwrap();
    let e = r.set_vat(&device, &a, Some(&other)).unwrap_err().to_string();
    assert!(e.contains("vertices"), "{e}");
    // A bake of nothing, or at no rate.
    let e = bake_vat(
        &lib,
        skeleton,
        &mesh,
        &VatDesc {
            fps: 0.0,
            ..VatDesc::default()
        },
        |_, _, _| {},
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("frames per second"), "{e}");
}
