//! Compressed clips: the compressor's accuracy, the CPU mirror and the GPU against the f64
//! decoder, the error metric, and the file format against corruption.

mod common;

use wgpu_anim::codec::{self, CompressionSettings};
use wgpu_anim::{LibraryBuilder, cpu};

#[test]
fn mirror_matches_the_f64_decoder_on_the_fox() {
    let imp = wgpu_anim::gltf_import::load(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/assets/Fox/Fox.gltf"
    )))
    .unwrap();
    let sk = &imp.skeletons[0];
    let clip = &sk.clips[0].clip;
    let (c, report) = codec::compress(&sk.skeleton, clip, &CompressionSettings::default()).unwrap();
    eprintln!("{report:?}");
    let mut b = LibraryBuilder::new();
    let s = b.add_skeleton(sk.skeleton.clone());
    let id = b.add_compressed_clip(s, &c).unwrap();
    let lib = b.build();
    for t in [0.0f32, 0.37, 1.7] {
        let pose = cpu::pose_at(&lib, id, t).unwrap();
        let want = c.sample_f64(&sk.skeleton, f64::from(t));
        let raw = wgpu_anim::reference::sample(&sk.skeleton, clip, f64::from(t));
        let mw = wgpu_anim::reference::local_to_model(&sk.skeleton, &want);
        let mr = wgpu_anim::reference::local_to_model(&sk.skeleton, &raw);
        let worst = mw
            .iter()
            .zip(&mr)
            .map(|(a, b)| (a.w_axis - b.w_axis).length())
            .fold(0.0, f64::max);
        eprintln!(
            "t {t}: f64 decoded vs raw joint positions: {worst:e}; report {}",
            report.max_error_cm
        );
        for (j, (g, w)) in pose.local.iter().zip(&want).enumerate() {
            let e = (g.rotation.truncate().as_dvec3() - glam::DVec3::new(w.rotation.x, w.rotation.y, w.rotation.z))
                .length();
            let e2 = w.rotation.angle_between(raw[j].rotation);
            let e3 = (g.translation.truncate().as_dvec3() - w.translation).length();
            if j == 0 || e > 1e-5 || e2 > 1e-5 || e3 > 1e-4 {
                eprintln!(
                    "t {t} joint {j}: mirror vs f64 {e:e}, f64 vs raw {e2:e} trans {e3:e} {:?} {:?}",
                    g.translation, w.translation
                );
            }
        }
    }
}
