#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| ctxkit_fuzz::highlight_code(data));
