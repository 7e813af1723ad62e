//! `wgpu-anim`: inspect, sample and render glTF animation files.

use glam::{DMat4, DVec3, Mat4, Vec2, Vec3};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wgpu_anim::gltf_import::{self, ChannelPath, GltfPose, Imported};
use wgpu_anim::gpu::{Camera, GroundRenderer, OffscreenTarget};
use wgpu_anim::scene::Character;
use wgpu_anim::{Animator, AnimatorDesc, InstanceDesc, Interpolation, LoopMode, SkinnedRenderer, reference};

const USAGE: &str = "\
wgpu-anim — GPU skeletal animation for crowds of skinned characters

USAGE:
    wgpu-anim inspect FILE
    wgpu-anim sample FILE --clip N --time T [--cpu | --reference] [--json]
    wgpu-anim render FILE [--clip N] [--time T] [--count K] [--size WxH] [--no-ground] --out IMAGE.png
    wgpu-anim bench [--characters 1000,4000,16000,64000] [--frames N] [--workloads single-clip,locomotion-2d]
                    [--paths gpu-fused,gpu-staged,cpu-1,cpu-all] [--threads N] [--json PATH] [--plot PATH.png]
    wgpu-anim --help

COMMANDS:
    inspect   Skeleton tree, clips (duration, channels, interpolation, keys), meshes
              (vertices, triangles, influences), morph targets and import notes.
    sample    Evaluates clip N (animation index in the file, or its name) at time T seconds,
              clamped to the clip's first and last key, no looping. Prints the joints' world
              matrices, the skinning matrices and the skinned vertices of mesh 0, primitive 0.
              --json      JSON with the fields and conventions of the conformance fixtures
                          (matrices are 16 floats, column-major; joints in skin order when
                          skinned, else every node in node order).
              --cpu       evaluate with the CPU mirror of the GPU stages (f32)
              --reference evaluate with the f64 reference implementation
              Without either flag the GPU evaluates the pose (any wgpu adapter; a software
              Vulkan driver such as lavapipe works).
    render    Draws clip N (default 0; index or name) at time T (default 0) to a PNG, without a
              window: the model's meshes skinned on the GPU, standing on a ground plane, seen
              from slightly above and in front (+Z), the camera framed on the posed model.
              --count K   draw K instances (default 1) on a grid, their times spread over the
                          clip so that they differ
              --size WxH  image size in pixels (default 800x600)
              --out IMAGE.png   where to write (required)
              --no-ground leave out the ground plane
    bench     Times one animation frame of crowds of built-in mannequins, for each workload
              (single-clip: one clip each; locomotion-2d: the 2D locomotion blend space, a
              quarter of the crowd mid-cross-fade; layered: that plus a masked override, a local
              and a mesh-space additive layer) and character count, on each path: gpu-fused (the
              GPU, one dispatch, the pose in workgroup memory; where the device allows it),
              gpu-staged (the GPU, four dispatches; per-pass times from timestamp queries when
              the adapter has them), cpu-1 (the CPU mirror on one thread) and cpu-all (the CPU
              mirror on every core). Medians over --frames frames (default 30) after 3 warm-up
              frames; progress on stderr, a Markdown table on stdout. A count the device cannot
              hold is skipped with a note. Bytes per joint are counted from the buffer layouts:
              per-character data, and shared library data (cached on a GPU).
              --characters  crowd sizes (default 1000,4000,16000,64000)
              --workloads   default single-clip,locomotion-2d,layered
              --paths       default gpu-fused,gpu-staged,cpu-1,cpu-all
              --threads N   threads of cpu-all (default: every core)
              --json PATH   the rows as a JSON array
              --plot PATH   a log-log PNG chart of frame time against characters

FILE is a .gltf (with its .bin files) or .glb file. Errors print one line and exit with status 1.
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let line = e.split_whitespace().collect::<Vec<_>>().join(" ");
            eprintln!("error: {line}");
            ExitCode::from(1)
        }
    }
}

fn run(args: &[String]) -> Result<(), String> {
    let Some(cmd) = args.first() else {
        return Err("no command given; run `wgpu-anim --help` for usage".into());
    };
    let rest = &args[1..];
    match cmd.as_str() {
        "-h" | "--help" | "help" => {
            print!("{USAGE}");
            Ok(())
        }
        "inspect" => {
            if rest.iter().any(|a| a == "-h" || a == "--help") {
                print!("{USAGE}");
                return Ok(());
            }
            let [file] = rest else {
                return Err("usage: wgpu-anim inspect FILE".into());
            };
            inspect(Path::new(file))
        }
        "sample" => sample(rest),
        "render" => render(rest),
        "bench" => bench(rest),
        other => Err(format!("unknown command '{other}'; run `wgpu-anim --help` for usage")),
    }
}

fn load(file: &Path) -> Result<Imported, String> {
    gltf_import::load(file).map_err(|e| e.to_string())
}

fn interp_name(i: Interpolation) -> &'static str {
    match i {
        Interpolation::Step => "STEP",
        Interpolation::Linear => "LINEAR",
        Interpolation::CubicSpline => "CUBICSPLINE",
    }
}

fn inspect(file: &Path) -> Result<(), String> {
    let imp = load(file)?;
    println!("file: {}", file.display());
    for (si, s) in imp.skeletons.iter().enumerate() {
        let sk = &s.skeleton;
        match s.skin {
            Some(skin) => println!(
                "skeleton {si} '{}': skin {skin}, {} joints ({} skin joints, {} ancestors)",
                sk.name(),
                sk.joint_count(),
                s.skin_joints.len(),
                sk.joint_count() - s.skin_joints.len()
            ),
            None => println!(
                "skeleton {si} '{}': rigid node hierarchy, {} joints",
                sk.name(),
                sk.joint_count()
            ),
        }
        let depths = sk.depths();
        for (j, depth) in depths.iter().enumerate() {
            let skin_index = s.skin_joints.iter().position(|&x| x == j);
            println!(
                "  {}{} (node {}{})",
                "  ".repeat(*depth as usize),
                sk.joint_names()[j],
                s.joint_nodes[j],
                skin_index.map_or(String::new(), |k| format!(", skin joint {k}"))
            );
        }
        if s.clips.is_empty() {
            println!("  no clips");
        }
        for c in &s.clips {
            let info = &imp.animations[c.animation];
            let imported: Vec<_> = info.channels.iter().filter(|ch| ch.imported).collect();
            println!(
                "  clip '{}' (animation {}): {:.4} s, {} joint tracks, {} channels",
                c.clip.name,
                c.animation,
                c.clip.duration,
                c.clip.tracks.len(),
                imported.len()
            );
        }
    }
    println!("animations: {}", imp.animations.len());
    for (ai, a) in imp.animations.iter().enumerate() {
        println!(
            "  {ai} '{}': keys {:.4}..{:.4} s, {} channels",
            a.name,
            a.first_key,
            a.duration,
            a.channels.len()
        );
        // Group channels by (path, interpolation): count and key range.
        let mut groups: Vec<(ChannelPath, Interpolation, usize, usize, usize, usize)> = Vec::new();
        for ch in &a.channels {
            match groups.iter_mut().find(|g| g.0 == ch.path && g.1 == ch.interpolation) {
                Some(g) => {
                    g.2 += 1;
                    g.3 = g.3.min(ch.keys);
                    g.4 = g.4.max(ch.keys);
                    g.5 += usize::from(!ch.imported);
                }
                None => groups.push((
                    ch.path,
                    ch.interpolation,
                    1,
                    ch.keys,
                    ch.keys,
                    usize::from(!ch.imported),
                )),
            }
        }
        for (path, interp, n, lo, hi, skipped) in groups {
            let keys = if lo == hi {
                format!("{lo} keys")
            } else {
                format!("{lo}..{hi} keys")
            };
            let skipped = if skipped > 0 {
                format!(", {skipped} not applied")
            } else {
                String::new()
            };
            println!("    {n} × {path} {}, {keys}{skipped}", interp_name(interp));
        }
    }
    println!("meshes: {}", imp.meshes.len());
    for m in &imp.meshes {
        println!(
            "  mesh {} primitive {} '{}' on node {} → skeleton {}: {} vertices, {} triangles, up to {} influences per vertex{}",
            m.mesh_index,
            m.primitive,
            m.mesh.name,
            m.node,
            m.skeleton,
            m.mesh.positions.len(),
            m.mesh.indices.len() / 3,
            m.max_influences,
            if m.morph_targets.is_empty() {
                String::new()
            } else {
                format!(", {} morph targets", m.morph_targets.len())
            }
        );
    }
    let morphs: usize = imp.meshes.iter().map(|m| m.morph_targets.len()).sum();
    println!("morph targets: {morphs} (read, not applied)");
    println!("notes: {}", imp.notes.len());
    for n in &imp.notes {
        println!("  - {n}");
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EvalPath {
    Gpu,
    Cpu,
    Reference,
}

impl EvalPath {
    fn name(self) -> &'static str {
        match self {
            EvalPath::Gpu => "gpu",
            EvalPath::Cpu => "cpu",
            EvalPath::Reference => "reference",
        }
    }
}

struct SampleArgs {
    file: PathBuf,
    clip: String,
    time: f64,
    path: EvalPath,
    json: bool,
}

fn parse_sample(args: &[String]) -> Result<SampleArgs, String> {
    let usage = "usage: wgpu-anim sample FILE --clip N --time T [--cpu | --reference] [--json]";
    let (mut file, mut clip, mut time) = (None, None, None);
    let (mut path, mut json) = (EvalPath::Gpu, false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--clip" => clip = Some(it.next().ok_or(usage)?.clone()),
            "--time" => {
                let v = it.next().ok_or(usage)?;
                let t: f64 = v.parse().map_err(|_| format!("--time: '{v}' is not a number"))?;
                if !t.is_finite() {
                    return Err(format!("--time: '{v}' is not finite"));
                }
                time = Some(t);
            }
            "--cpu" => path = EvalPath::Cpu,
            "--reference" => path = EvalPath::Reference,
            "--json" => json = true,
            "-h" | "--help" => return Err(usage.into()),
            s if s.starts_with('-') => return Err(format!("unknown option '{s}'; {usage}")),
            s => {
                if file.replace(PathBuf::from(s)).is_some() {
                    return Err(format!("more than one FILE given; {usage}"));
                }
            }
        }
    }
    Ok(SampleArgs {
        file: file.ok_or(usage)?,
        clip: clip.ok_or(usage)?,
        time: time.ok_or(usage)?,
        path,
        json,
    })
}

fn sample(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return Ok(());
    }
    let a = parse_sample(args)?;
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let animation = find_animation(&imp, &file, &a.clip)?;
    let info = &imp.animations[animation];
    let s = imp
        .primary_skeleton()
        .ok_or_else(|| format!("{file}: nothing to animate (no nodes)"))?;
    let sk = &imp.skeletons[s];
    let c = sk
        .clip_of_animation(animation)
        .ok_or_else(|| format!("{file}: animation {animation} does not animate the first skeleton"))?;
    let t = a.time.clamp(f64::from(info.first_key), f64::from(info.duration));
    let ev = match a.path {
        EvalPath::Reference => {
            let local = reference::sample(&sk.skeleton, &sk.clips[c].clip, t);
            let model = reference::local_to_model(&sk.skeleton, &local);
            let palette = reference::palette(&sk.skeleton, &model);
            Evaluated {
                model,
                palette,
                vertices: None,
            }
        }
        EvalPath::Cpu => cpu_pose(&imp, s, c, t)?,
        EvalPath::Gpu => gpu_pose(&imp, s, c, t)?,
    };
    let mut pose = imp.gltf_pose(s, &ev.model, &ev.palette).map_err(|e| e.to_string())?;
    if let Some(v) = ev.vertices {
        pose.vertices = v;
    }
    if a.json {
        print_json(&file, animation, &info.name, a.time, t, a.path, &pose);
    } else {
        print_summary(&file, animation, &info.name, t, a.path, &pose);
    }
    Ok(())
}

/// The animation `clip` names: an index in the file's animations, or a name.
fn find_animation(imp: &Imported, file: &str, clip: &str) -> Result<usize, String> {
    let animation = match clip.parse::<usize>() {
        Ok(n) => n,
        Err(_) => imp
            .animations
            .iter()
            .position(|x| x.name == clip)
            .ok_or_else(|| format!("{file}: no animation called '{clip}'"))?,
    };
    if animation >= imp.animations.len() {
        return Err(format!(
            "{file}: clip {animation} does not exist (the file has {} animations)",
            imp.animations.len()
        ));
    }
    Ok(animation)
}

/// A pose evaluated by the crate: model matrices and palette in skeleton joint order, and the
/// skinned vertices of mesh 0, primitive 0 when it belongs to the skeleton.
struct Evaluated {
    model: Vec<DMat4>,
    palette: Vec<DMat4>,
    vertices: Option<Vec<DVec3>>,
}

fn mesh0(imp: &Imported, s: usize) -> Option<Vec<wgpu_anim::SkinVertex>> {
    imp.mesh(0, 0)
        .filter(|m| m.skeleton == s && imp.skeletons[s].skin.is_some())
        .map(|m| m.mesh.gpu_vertices())
}

fn to_dmat(a: &[wgpu_anim::Affine]) -> Vec<DMat4> {
    a.iter().map(|a| a.to_mat4().as_dmat4()).collect()
}

fn to_points(p: &[wgpu_anim::cpu::SkinnedPoint]) -> Vec<DVec3> {
    p.iter().map(|p| p.position.truncate().as_dvec3()).collect()
}

/// The CPU mirror of the GPU stages (f32), skinning included.
fn cpu_pose(imp: &Imported, s: usize, c: usize, t: f64) -> Result<Evaluated, String> {
    let lib = imp.build_library().map_err(|e| e.to_string())?;
    let pose = wgpu_anim::cpu::pose_at(&lib.library, lib.clips[s][c], t as f32);
    let vertices = mesh0(imp, s).map(|v| to_points(&wgpu_anim::cpu::skin(&pose.palette, 0, &v)));
    Ok(Evaluated {
        model: to_dmat(&pose.model),
        palette: to_dmat(&pose.palette),
        vertices,
    })
}

/// The GPU: one animator instance, every stage read back, vertices through the `skin` shader.
fn gpu_pose(imp: &Imported, s: usize, c: usize, t: f64) -> Result<Evaluated, String> {
    let lib = imp.build_library().map_err(|e| e.to_string())?;
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &lib.library,
        &AnimatorDesc {
            max_instances: 1,
            max_joints: None,
            page_instances: None,
        },
    )
    .map_err(|e| e.to_string())?;
    animator
        .add_instance(&InstanceDesc {
            time: t as f32,
            rate: 0.0,
            loop_mode: LoopMode::Once,
            ..InstanceDesc::new(lib.clips[s][c])
        })
        .map_err(|e| e.to_string())?;
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder);
    queue.submit([encoder.finish()]);
    let (_, pose) = animator.read_back(&device, &queue).map_err(|e| e.to_string())?;
    let inst = animator.instances()[0];
    let range = inst.joint_offset as usize..(inst.joint_offset + inst.joint_count) as usize;
    let (model, palette) = match (pose.model.get(range.clone()), pose.palette.get(range)) {
        (Some(m), Some(p)) => (to_dmat(m), to_dmat(p)),
        _ => return Err("GPU read-back is shorter than the instance's joints".into()),
    };
    let vertices = match mesh0(imp, s) {
        Some(v) => Some(to_points(
            &wgpu_anim::gpu::skin_on_gpu(&device, &queue, &animator, inst.joint_offset, &v)
                .map_err(|e| e.to_string())?,
        )),
        None => None,
    };
    Ok(Evaluated {
        model,
        palette,
        vertices,
    })
}

fn mat_json(m: &DMat4) -> Value {
    json!(m.to_cols_array().to_vec())
}

fn print_json(file: &str, clip: usize, clip_name: &str, time: f64, sampled: f64, path: EvalPath, pose: &GltfPose) {
    let joints: Vec<Value> = pose
        .joints
        .iter()
        .map(|j| {
            let mut o = serde_json::Map::new();
            if let Some(i) = j.index {
                o.insert("index".into(), json!(i));
            }
            o.insert("node".into(), json!(j.node));
            o.insert("name".into(), json!(j.name));
            o.insert("world".into(), mat_json(&j.world));
            Value::Object(o)
        })
        .collect();
    let v = json!({
        "asset": file,
        "clip": clip,
        "clip_name": clip_name,
        "time": time,
        "sampled_time": sampled,
        "time_rule": "clamped to [first key, last key]; no looping",
        "weights": "normalized (WEIGHTS_0 divided by their sum)",
        "evaluated_on": path.name(),
        "skinned": pose.skinned,
        "joints": joints,
        "skin_matrices": pose.skin_matrices.iter().map(mat_json).collect::<Vec<_>>(),
        "vertices": pose.vertices.iter().map(|v| json!([v.x, v.y, v.z])).collect::<Vec<_>>(),
    });
    println!("{v}");
}

fn print_summary(file: &str, clip: usize, clip_name: &str, sampled: f64, path: EvalPath, pose: &GltfPose) {
    println!(
        "{file}: clip {clip} '{clip_name}' at {sampled:.4} s ({}), {} joints{}",
        path.name(),
        pose.joints.len(),
        if pose.skinned {
            " in skin order"
        } else {
            " in node order"
        }
    );
    for j in pose.joints.iter().take(8) {
        let p = j.world.w_axis.truncate();
        println!(
            "  {:<24} node {:>3}  at ({:.4}, {:.4}, {:.4})",
            j.name, j.node, p.x, p.y, p.z
        );
    }
    if pose.joints.len() > 8 {
        println!("  … {} more (use --json for all)", pose.joints.len() - 8);
    }
    if !pose.vertices.is_empty() {
        let (lo, hi) = pose
            .vertices
            .iter()
            .fold((DVec3::splat(f64::MAX), DVec3::splat(f64::MIN)), |(lo, hi), v| {
                (lo.min(*v), hi.max(*v))
            });
        println!(
            "  mesh 0/0: {} skinned vertices, bounds ({:.4}, {:.4}, {:.4}) .. ({:.4}, {:.4}, {:.4})",
            pose.vertices.len(),
            lo.x,
            lo.y,
            lo.z,
            hi.x,
            hi.y,
            hi.z
        );
    }
}

struct RenderArgs {
    file: PathBuf,
    clip: String,
    time: f32,
    count: u32,
    width: u32,
    height: u32,
    out: PathBuf,
    ground: bool,
}

/// Most instances `render --count` draws.
const MAX_RENDER_COUNT: u32 = 10_000;

fn parse_render(args: &[String]) -> Result<RenderArgs, String> {
    let usage =
        "usage: wgpu-anim render FILE [--clip N] [--time T] [--count K] [--size WxH] [--no-ground] --out IMAGE.png";
    let mut a = RenderArgs {
        file: PathBuf::new(),
        clip: "0".into(),
        time: 0.0,
        count: 1,
        width: 800,
        height: 600,
        out: PathBuf::new(),
        ground: true,
    };
    let (mut file, mut out) = (None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || {
            it.next()
                .map(String::as_str)
                .ok_or_else(|| format!("{flag} needs a value; {usage}"))
        };
        match flag.as_str() {
            "--clip" => a.clip = value()?.to_string(),
            "--time" => {
                let v = value()?;
                let t: f32 = v.parse().map_err(|_| format!("--time: '{v}' is not a number"))?;
                if !t.is_finite() {
                    return Err(format!("--time: '{v}' is not finite"));
                }
                a.time = t;
            }
            "--count" => {
                let v = value()?;
                a.count = v
                    .parse()
                    .ok()
                    .filter(|k| (1..=MAX_RENDER_COUNT).contains(k))
                    .ok_or_else(|| format!("--count: '{v}' is not a whole number from 1 to {MAX_RENDER_COUNT}"))?;
            }
            "--size" => {
                let v = value()?;
                let size = v
                    .split_once(['x', 'X'])
                    .and_then(|(w, h)| Some((w.parse::<u32>().ok()?, h.parse::<u32>().ok()?)))
                    .filter(|&(w, h)| (1..=16384).contains(&w) && (1..=16384).contains(&h));
                (a.width, a.height) =
                    size.ok_or_else(|| format!("--size: '{v}' is not WxH with sides from 1 to 16384 pixels"))?;
            }
            "--out" => out = Some(PathBuf::from(value()?)),
            "--no-ground" => a.ground = false,
            s if s.starts_with('-') => return Err(format!("unknown option '{s}'; {usage}")),
            s => {
                if file.replace(PathBuf::from(s)).is_some() {
                    return Err(format!("more than one FILE given; {usage}"));
                }
            }
        }
    }
    a.file = file.ok_or_else(|| format!("no FILE given; {usage}"))?;
    a.out = out.ok_or_else(|| format!("--out IMAGE.png is required; {usage}"))?;
    Ok(a)
}

/// A perspective camera slightly above and in front (+Z) of the box `lo..hi`, turned a little to
/// the side, at the distance where every corner of the box is inside the picture with a margin.
fn frame_box(lo: Vec3, hi: Vec3, aspect: f32) -> Camera {
    let fov_y = 35f32.to_radians();
    let margin = 1.12;
    let centre = (lo + hi) * 0.5;
    let to_eye = Vec3::new(0.45, 0.38, 1.0).normalize();
    let right = Vec3::Y.cross(to_eye).normalize();
    let up = to_eye.cross(right);
    let (ty, tx) = ((fov_y * 0.5).tan() / margin, (fov_y * 0.5).tan() * aspect / margin);
    let radius = ((hi - lo) * 0.5).length();
    let mut distance: f32 = 0.0;
    for k in 0..8 {
        let corner = Vec3::new(
            if k & 1 == 0 { lo.x } else { hi.x },
            if k & 2 == 0 { lo.y } else { hi.y },
            if k & 4 == 0 { lo.z } else { hi.z },
        ) - centre;
        let (x, y, z) = (corner.dot(right), corner.dot(up), corner.dot(to_eye));
        distance = distance.max(z + x.abs() / tx).max(z + y.abs() / ty);
    }
    let distance = if distance.is_finite() && distance > 0.0 {
        distance.max(radius * 1.01)
    } else {
        1.0
    };
    let near = (distance - radius).max(distance * 0.01) * 0.5;
    let far = (distance + radius) * 4.0 + 100.0;
    Camera::look_at(centre + to_eye * distance, centre, fov_y, aspect, near, far)
}

fn render(args: &[String]) -> Result<(), String> {
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return Ok(());
    }
    let a = parse_render(args)?;
    let imp = load(&a.file)?;
    let file = a.file.display().to_string();
    let animation = find_animation(&imp, &file, &a.clip)?;
    let s = Character::skeleton_of(&imp).map_err(|e| e.to_string())?;
    let c = imp.skeletons[s]
        .clip_of_animation(animation)
        .ok_or_else(|| format!("{file}: animation {animation} does not animate the skeleton that has the mesh"))?;
    let character = Character::from_imported(&imp, s).map_err(|e| e.to_string())?;
    let clip = character.clips[c];
    let duration = character.library.clip_duration(clip).unwrap_or(0.0);

    // Instances on a grid facing +Z, times spread over the clip; the posed box of each from the
    // CPU mirror, in the world.
    let (lo, hi) = character.posed_bounds(clip, a.time);
    let size = (hi - lo) * character.scale;
    let gap = size.max_element() * 0.15;
    let (sx, sz) = (size.x + gap, size.z + gap);
    let side = (a.count as f32).sqrt().ceil() as u32;
    let rows = a.count.div_ceil(side);
    let mut instances = Vec::with_capacity(a.count as usize);
    let (mut wlo, mut whi) = (Vec3::splat(f32::MAX), Vec3::splat(f32::MIN));
    for i in 0..a.count {
        let (col, row) = (i % side, i / side);
        let position = Vec2::new(
            (col as f32 - (side - 1) as f32 * 0.5) * sx,
            (row as f32 - (rows - 1) as f32 * 0.5) * sz,
        );
        let time = if i == 0 || duration <= 0.0 {
            a.time
        } else {
            (a.time + duration * i as f32 / a.count as f32).rem_euclid(duration)
        };
        let world = character.world(position, 0.0);
        let (plo, phi) = character.posed_bounds(clip, time);
        for k in 0..8 {
            let p = world.transform_point3(Vec3::new(
                if k & 1 == 0 { plo.x } else { phi.x },
                if k & 2 == 0 { plo.y } else { phi.y },
                if k & 4 == 0 { plo.z } else { phi.z },
            ));
            (wlo, whi) = (wlo.min(p), whi.max(p));
        }
        instances.push((world, time));
    }
    if !(wlo.is_finite() && whi.is_finite()) {
        return Err(format!("{file}: the posed model has no finite bounds"));
    }
    // Stand the lowest point on the ground (y = 0).
    let lift = Mat4::from_translation(Vec3::new(0.0, -wlo.y, 0.0));
    (whi.y, wlo.y) = (whi.y - wlo.y, 0.0);

    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let mut animator = Animator::new(
        &device,
        &character.library,
        &AnimatorDesc {
            max_instances: a.count,
            max_joints: None,
            page_instances: None,
        },
    )
    .map_err(|e| e.to_string())?;
    for (world, time) in &instances {
        animator
            .add_instance(&InstanceDesc {
                time: *time,
                rate: 0.0,
                loop_mode: LoopMode::Once,
                world: lift * *world,
                tint: [225, 170, 120, 255],
                ..InstanceDesc::new(clip)
            })
            .map_err(|e| e.to_string())?;
    }
    let joints = imp.skeletons[s].skeleton.joint_count();
    let target = OffscreenTarget::new(&device, a.width, a.height).map_err(|e| e.to_string())?;
    let renderer = SkinnedRenderer::new(
        &device,
        &animator,
        &character.mesh,
        joints,
        OffscreenTarget::COLOR_FORMAT,
        Some(OffscreenTarget::DEPTH_FORMAT),
        1,
    )
    .map_err(|e| e.to_string())?;
    let ground = a.ground.then(|| {
        GroundRenderer::new(
            &device,
            OffscreenTarget::COLOR_FORMAT,
            Some(OffscreenTarget::DEPTH_FORMAT),
            1,
        )
    });
    let camera = frame_box(wlo, whi, a.width as f32 / a.height as f32);
    renderer.set_camera(&queue, &camera);
    if let Some(g) = &ground {
        g.set_camera(&queue, &camera);
    }
    animator.prepare(&queue, 0.0);
    let mut encoder = device.create_command_encoder(&Default::default());
    animator.encode(&mut encoder);
    {
        let (mut pass, _views) = target.begin_pass(&mut encoder, GroundRenderer::SKY);
        if let Some(g) = &ground {
            g.draw(&mut pass);
        }
        renderer.draw(&mut pass, 0..a.count);
    }
    queue.submit([encoder.finish()]);
    let rgba = target.read_rgba(&device, &queue).map_err(|e| e.to_string())?;
    wgpu_anim::image::save_png(&a.out, a.width, a.height, &rgba).map_err(|e| e.to_string())?;
    println!(
        "wrote {} ({}x{}): {file}, clip {animation} '{}' at {} s, {} instance{}",
        a.out.display(),
        a.width,
        a.height,
        imp.animations[animation].name,
        a.time,
        a.count,
        if a.count == 1 { "" } else { "s" }
    );
    Ok(())
}

fn parse_list<T>(flag: &str, value: &str, parse: impl Fn(&str) -> Option<T>) -> Result<Vec<T>, String> {
    let items: Vec<&str> = value.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if items.is_empty() {
        return Err(format!("{flag} needs at least one value"));
    }
    items
        .into_iter()
        .map(|s| parse(s).ok_or_else(|| format!("{flag}: '{s}' is not valid")))
        .collect()
}

fn bench(args: &[String]) -> Result<(), String> {
    use wgpu_anim::bench::{self, Config, PathKind, Workload};
    if args.iter().any(|a| a == "-h" || a == "--help") {
        print!("{USAGE}");
        return Ok(());
    }
    let mut config = Config::default();
    let (mut json, mut plot) = (None, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--characters" => {
                config.counts = parse_list(flag, value()?, |s| {
                    s.replace('_', "").parse::<u32>().ok().filter(|&n| n > 0)
                })?
            }
            "--frames" => {
                let v = value()?;
                config.frames = v
                    .parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("--frames: '{v}' is not a positive whole number"))?;
            }
            "--workloads" => config.workloads = parse_list(flag, value()?, Workload::from_name)?,
            "--paths" => {
                config.paths = parse_list(flag, value()?, |s| PathKind::ALL.into_iter().find(|p| p.name() == s))?
            }
            "--threads" => {
                let v = value()?;
                config.threads = Some(
                    v.parse()
                        .ok()
                        .filter(|&n: &usize| n > 0)
                        .ok_or_else(|| format!("--threads: '{v}' is not a positive whole number"))?,
                );
            }
            "--json" => json = Some(PathBuf::from(value()?)),
            "--plot" => plot = Some(PathBuf::from(value()?)),
            other => {
                return Err(format!(
                    "unknown bench option '{other}'; run `wgpu-anim --help` for usage"
                ));
            }
        }
    }
    let (device, queue) = wgpu_anim::gpu::headless_device().map_err(|e| e.to_string())?;
    let report = bench::run(&device, &queue, &config, &mut |line| eprintln!("{line}")).map_err(|e| e.to_string())?;
    println!(
        "One animation frame, medians of {} frames; device: {}; {}",
        config.frames, report.device, report.date
    );
    println!();
    print!("{}", bench::markdown_table(&report.rows));
    for note in &report.notes {
        println!("note: {note}");
    }
    if let Some(path) = json {
        let text = serde_json::to_string_pretty(&report.rows).map_err(|e| e.to_string())?;
        std::fs::write(&path, text + "\n").map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        eprintln!("wrote {}", path.display());
    }
    if let Some(path) = plot {
        let title = format!("ONE ANIMATION FRAME - {}", report.device);
        bench::plot::save(&path, &report.rows, &title).map_err(|e| e.to_string())?;
        eprintln!("wrote {}", path.display());
    }
    Ok(())
}
