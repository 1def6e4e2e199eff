//! The thirteenth held-out set, written on 2026-11-26 (about 19:50 UTC) before any summary of
//! it was read, by someone who had not read the summarizer's code (`ctxkit-compaction/src/offline/`)
//! and did not run `summary-eval` or the tests of ctxkit-bench and ctxkit-compaction on it. What was
//! read to write it: issue 18, the `summary-eval` section of `docs/summaries.md` (scoring only),
//! `mod.rs` (`Case`, `fact`, the scoring), `builder.rs` and `cases_held_out_third.rs` as the format
//! example; no other held-out file. The facts are what an engineer taking over each session would
//! list, each with the spellings a correct summary could use. Reported apart ("13th set").

use ctxkit_compaction::SummaryPurpose;
use serde_json::json;

use super::{Case, SessionBuilder, fact, parallel_turn};

pub(super) fn cases() -> Vec<Case> {
    vec![
        pytorch_churn(),
        bootloader_crc_update(),
        symfony_pdf_polish(),
        abandoned_buildkite(),
    ]
}

const DESCRIBE_TABLE: &str = "            tenure_months  monthly_spend  seats  logins_30d  tickets_90d  api_calls_30d  plan_type  churned\ncount            48211.00       48211.00  48211    48211.00     48211.00       48211.00      48211  48211.0\nmean                18.42         312.77    7.9       41.06         1.84        9120.55        NaN     0.11\nstd                 14.90         401.22   11.3       37.81         2.95       20411.02        NaN     0.31\nmin                  0.00           0.00    1.0        0.00         0.00           0.00        NaN     0.00\n25%                  6.00          49.00    1.0       12.00         0.00          14.00        NaN     0.00\n50%                 15.00         180.00    4.0       31.00         1.00        1022.00        NaN     0.00\n75%                 27.00         420.00    9.0       60.00         2.00        8840.00        NaN     0.00\nmax                 96.00        9800.00  250.0      412.00        61.00      998012.00        NaN     1.00\nunique                NaN            NaN    NaN         NaN          NaN            NaN          4      NaN\ntop                   NaN            NaN    NaN         NaN          NaN            NaN       team      NaN\nfreq                  NaN            NaN    NaN         NaN          NaN            NaN      21904      NaN";

/// A long PyTorch session over three requests: new usage features with a standing constraint, a
/// shape mismatch fixed after one wrong attempt, a loss the user changes their mind on, PR-AUC before
/// and after, a commit on a feature branch, and a seed sweep still running when the span ends.
fn pytorch_churn() -> Case {
    let mut messages = SessionBuilder::new()
        .user("Add the usage features (logins_30d, tickets_90d, api_calls_30d, plan_type) to the churn MLP and retrain. Ground rules for this repo: never write to data/raw/, it's the frozen snapshot we report against, and always train with seed 1337 so runs are comparable.")
        .bash("ls data/ configs/ src/churn/", "data/:\nprocessed  raw  README.md\n\nconfigs/:\nchurn_mlp.yaml  churn_gbm.yaml  sweep.yaml\n\nsrc/churn/:\n__init__.py  data.py  model.py  metrics.py  train_loop.py")
        .build();
    messages.extend(parallel_turn(
        |index| format!("call_pt_{index}"),
        "Reading the config, the model and the data module together.",
        &[
            ("read", json!({"path": "configs/churn_mlp.yaml"}), "seed: 1337\ndata:\n  train: data/processed/train.parquet\n  val: data/processed/val.parquet\nmodel:\n  in_features: 38\n  hidden: [128, 64]\n  dropout: 0.2\ntrain:\n  epochs: 30\n  batch_size: 256\n  lr: 0.001\n  loss: bce"),
            ("read", json!({"path": "src/churn/model.py"}), "import torch.nn as nn\n\nclass ChurnMLP(nn.Module):\n    def __init__(self, in_features, hidden, dropout):\n        super().__init__()\n        layers = []\n        for width in hidden:\n            layers += [nn.Linear(in_features, width), nn.ReLU(), nn.Dropout(dropout)]\n            in_features = width\n        layers.append(nn.Linear(in_features, 1))\n        self.net = nn.Sequential(*layers)\n\n    def forward(self, x):\n        return self.net(x).squeeze(-1)"),
            ("read", json!({"path": "src/churn/data.py"}), "from sklearn.compose import ColumnTransformer\nfrom sklearn.preprocessing import OneHotEncoder, StandardScaler\n\nNUMERIC = [\"tenure_months\", \"monthly_spend\", \"seats\"]\nCATEGORICAL = [\"region\", \"industry\"]\n\ndef build_preprocessor():\n    return ColumnTransformer([\n        (\"num\", StandardScaler(), NUMERIC),\n        (\"cat\", OneHotEncoder(), CATEGORICAL),\n    ])"),
        ],
    ));
    messages.extend(SessionBuilder::new()
        .bash("python -c \"import pandas as pd; df = pd.read_parquet('data/processed/train.parquet'); print(df.describe(include='all').to_string())\"", DESCRIBE_TABLE)
        .thinking("api_calls_30d is very skewed (max 998012), log1p it before scaling. plan_type has 4 values.")
        .edit("src/churn/data.py", "NUMERIC = [\"tenure_months\", \"monthly_spend\", \"seats\"]\nCATEGORICAL = [\"region\", \"industry\"]", "NUMERIC = [\"tenure_months\", \"monthly_spend\", \"seats\", \"logins_30d\", \"tickets_90d\", \"api_calls_30d\"]\nCATEGORICAL = [\"region\", \"industry\", \"plan_type\"]\nLOG_SCALED = [\"api_calls_30d\"]")
        .bash("python train.py --config configs/churn_mlp.yaml", "[seed 1337] loading data/processed/train.parquet (48211 rows)\nTraceback (most recent call last):\n  File \"train.py\", line 61, in <module>\n    main()\n  File \"train.py\", line 54, in main\n    loss = run_epoch(model, loader, optimizer)\n  File \"/repo/src/churn/train_loop.py\", line 22, in run_epoch\n    logits = model(features)\n  File \"/repo/.venv/lib/python3.11/site-packages/torch/nn/modules/linear.py\", line 116, in forward\n    return F.linear(input, self.weight, self.bias)\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (256x42 and 38x128)\n\nCommand exited with code 1")
        .assistant("The model still expects 38 inputs; the new features make 42. I'll set `in_features: 42` in the config.")
        .edit("configs/churn_mlp.yaml", "  in_features: 38", "  in_features: 42")
        .bash("python train.py --config configs/churn_mlp.yaml", "[seed 1337] loading data/processed/train.parquet (48211 rows)\nepoch 1/30 train_loss=0.3412\nTraceback (most recent call last):\n  File \"/repo/src/churn/train_loop.py\", line 41, in evaluate\n    logits = model(features)\nRuntimeError: mat1 and mat2 shapes cannot be multiplied (256x40 and 42x128)\n\nCommand exited with code 1")
        .assistant("Hard-coding was wrong: the validation split is transformed by a second encoder fitted on val, which has only 2 of the 4 plan types, so it yields 40 columns. The real fix: fit the preprocessor once on train, with `OneHotEncoder(handle_unknown=\"ignore\")`, reuse it for val, and take `in_features` from `len(preprocessor.get_feature_names_out())` instead of the config.")
        .edit("src/churn/data.py", "(\"cat\", OneHotEncoder(), CATEGORICAL),", "(\"cat\", OneHotEncoder(handle_unknown=\"ignore\"), CATEGORICAL),")
        .edit("train.py", "model = ChurnMLP(cfg.model.in_features, cfg.model.hidden, cfg.model.dropout)", "preprocessor = build_preprocessor().fit(train_frame)\nin_features = len(preprocessor.get_feature_names_out())\nmodel = ChurnMLP(in_features, cfg.model.hidden, cfg.model.dropout)")
        .edit("configs/churn_mlp.yaml", "  in_features: 42\n", "")
        .user("ok. and while you're at it switch the loss to focal loss, the classes are 11% positive")
        .write("src/churn/losses.py", "import torch\nimport torch.nn.functional as F\n\ndef focal_loss(logits, targets, gamma=2.0, alpha=0.25):\n    bce = F.binary_cross_entropy_with_logits(logits, targets, reduction=\"none\")\n    p_t = torch.exp(-bce)\n    return (alpha * (1 - p_t) ** gamma * bce).mean()\n")
        .user("actually no, forget focal loss, I don't want another knob to tune. keep BCE and just set pos_weight from the class ratio")
        .bash("rm src/churn/losses.py", "")
        .edit("train.py", "criterion = nn.BCEWithLogitsLoss()", "pos_weight = torch.tensor((1 - train_labels.mean()) / train_labels.mean())\ncriterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)")
        .bash("python train.py --config configs/churn_mlp.yaml 2>&1 | tail -8", "epoch 27/30 train_loss=0.5931 val_pr_auc=0.4288\nepoch 28/30 train_loss=0.5917 val_pr_auc=0.4301\nepoch 29/30 train_loss=0.5902 val_pr_auc=0.4311\nepoch 30/30 train_loss=0.5899 val_pr_auc=0.4307\n| metric      | baseline (38 feats) | usage feats |\n|-------------|---------------------|-------------|\n| val PR-AUC  | 0.388               | 0.431       |\n| val ROC-AUC | 0.812               | 0.847       |")
        .assistant("Validation PR-AUC (the metric you track) went from 0.388 to 0.431; ROC-AUC 0.812 → 0.847.")
        .bash("pytest tests/ -q", "......................F.\n=================================== FAILURES ===================================\n___________________________ test_model_forward_shape ___________________________\n    def test_model_forward_shape():\n>       model = ChurnMLP(38, [128, 64], 0.2)\n>       out = model(torch.randn(8, 42))\nE       RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x42 and 38x128)\ntests/test_model.py:14: RuntimeError\n1 failed, 23 passed in 6.12s\n\nCommand exited with code 1")
        .edit("tests/test_model.py", "    model = ChurnMLP(38, [128, 64], 0.2)", "    model = ChurnMLP(42, [128, 64], 0.2)")
        .bash("pytest tests/ -q", "........................\n24 passed in 6.03s")
        .bash("git checkout -b feat/churn-usage-features && git add -A && git commit -m \"churn: usage features, shared preprocessor, pos_weight BCE\"", "Switched to a new branch 'feat/churn-usage-features'\n[feat/churn-usage-features 7e3b9c41] churn: usage features, shared preprocessor, pos_weight BCE\n 4 files changed, 19 insertions(+), 6 deletions(-)")
        .user("nice. now run the sweep over 5 seeds (train.py has --seeds) so we know 0.431 isn't luck, and write the mean ± std table to reports/churn_v2.md")
        .assistant("Starting the 5-seed run; it takes about 20 minutes on CPU.")
        .tool("bash", json!({"command": "python train.py --config configs/churn_mlp.yaml --seeds 5 > /tmp/sweep.log 2>&1"}), None)
        .build());
    Case {
        name: "pytorch churn usage features (held out, 13th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("constraint: never write to data/raw", &["data/raw"]),
            fact("constraint: seed 1337", &["1337"]),
            fact(
                "train command",
                &["train.py --config configs/churn_mlp.yaml"],
            ),
            fact(
                "the shape error",
                &["mat1 and mat2", "shapes cannot be multiplied"],
            ),
            fact(
                "fix: in_features from the fitted preprocessor",
                &["get_feature_names_out"],
            ),
            fact(
                "fix: encoder ignores unknown categories",
                &["handle_unknown"],
            ),
            fact("data module edited", &["src/churn/data.py"]),
            fact(
                "user's choice: BCE with pos_weight, not focal loss",
                &["pos_weight"],
            ),
            fact("PR-AUC before", &["0.388"]),
            fact("PR-AUC after", &["0.431"]),
            fact("test command", &["pytest tests/ -q", "pytest tests/"]),
            fact("branch", &["feat/churn-usage-features"]),
            fact("commit", &["7e3b9c41"]),
            fact(
                "open: the 5-seed sweep",
                &["--seeds 5", "5 seeds", "five seeds", "5-seed"],
            ),
            fact("open: report file", &["reports/churn_v2.md"]),
        ],
    }
}

/// An update of an earlier ctxkit summary on an STM32 bootloader (CMake, ctest on the host, an
/// arm-none-eabi cross build): the in-progress CRC check is finished, a compiler error and a flash
/// overflow on the way, a decision on how to fit, and a request to try it on the board left open.
fn bootloader_crc_update() -> Case {
    let previous = "_Extractive summary written offline by ctxkit (no model was used)._\n\n## Goal\n- **Latest:** Verify a CRC32 of the application image in the bootloader before jumping to it\n\n## Constraints & Preferences\n- No dynamic allocation (no `malloc`) anywhere in the bootloader\n- The bootloader must fit its 32 KiB flash region (0x08000000–0x08007FFF)\n\n## Progress\n### Done\n- [x] Added `crc32_update()` in `boot/src/crc32.c` with host unit tests in `boot/tests/test_crc32.c`\n\n### In Progress\n- [ ] Check the image CRC in `boot/src/boot_main.c` before `jump_to_app()`\n\n### Blocked\n- (none)\n\n## Key Decisions\n- Bitwise CRC32 without a lookup table, to save 1 KiB of flash\n\n## Next Steps\n1. Run the host tests with `ctest --test-dir build-host`\n2. Cross build with `cmake --build build-arm`\n\n## Critical Context\n- Branch: `feat/boot-crc`\n- Toolchain file: `cmake/arm-none-eabi.cmake`";
    let mut messages = SessionBuilder::new()
        .user("continue where you left off")
        .read("boot/src/boot_main.c", "#include \"image_header.h\"\n#include \"crc32.h\"\n\nvoid boot_main(void) {\n    const image_header_t *hdr = (const image_header_t *)APP_BASE;\n    BOOT_LOG(\"image size %lu\\n\", hdr->size);\n    jump_to_app(APP_BASE + sizeof(image_header_t));\n}")
        .edit("boot/src/boot_main.c", "    jump_to_app(APP_BASE + sizeof(image_header_t));", "    uint32_t crc = crc32_update(CRC32_INIT, (const uint8_t *)(APP_BASE + sizeof(image_header_t)), hdr->size);\n    if (crc32_finalize(crc) != hdr->crc32) {\n        BOOT_LOG(\"bad image crc\\n\");\n        enter_dfu();\n    }\n    jump_to_app(APP_BASE + sizeof(image_header_t));")
        .bash("cmake --build build-host && ctest --test-dir build-host", "[ 20%] Building C object boot/CMakeFiles/boot_core.dir/src/boot_main.c.o\n/repo/boot/src/boot_main.c: In function 'boot_main':\n/repo/boot/src/boot_main.c:9:9: error: implicit declaration of function 'crc32_finalize'; did you mean 'crc32_update'? [-Werror=implicit-function-declaration]\n    9 |     if (crc32_finalize(crc) != hdr->crc32) {\n      |         ^~~~~~~~~~~~~~\n      |         crc32_update\ncc1: all warnings being treated as errors\ngmake[2]: *** [boot/CMakeFiles/boot_core.dir/build.make:90: boot/CMakeFiles/boot_core.dir/src/boot_main.c.o] Error 1\ngmake[1]: *** [CMakeFiles/Makefile2:143: boot/CMakeFiles/boot_core.dir/all] Error 2\ngmake: *** [Makefile:101: all] Error 2\n\nCommand exited with code 2")
        .assistant("`crc32_finalize` exists in crc32.c but was never declared in the header.")
        .edit("boot/include/crc32.h", "uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t len);", "uint32_t crc32_update(uint32_t crc, const uint8_t *data, size_t len);\nuint32_t crc32_finalize(uint32_t crc);")
        .bash("cmake --build build-host && ctest --test-dir build-host", "[100%] Built target boot_core\nTest project /repo/build-host\n    Start 1: test_crc32_empty\n1/8 Test #1: test_crc32_empty ...............   Passed    0.00 sec\n    Start 2: test_crc32_check_value\n2/8 Test #2: test_crc32_check_value .........   Passed    0.00 sec\n    Start 3: test_crc32_incremental\n3/8 Test #3: test_crc32_incremental .........   Passed    0.00 sec\n    Start 4: test_header_parse\n4/8 Test #4: test_header_parse ..............   Passed    0.00 sec\n    Start 5: test_boot_good_image\n5/8 Test #5: test_boot_good_image ...........   Passed    0.01 sec\n    Start 6: test_boot_bad_crc_enters_dfu\n6/8 Test #6: test_boot_bad_crc_enters_dfu ...   Passed    0.01 sec\n    Start 7: test_boot_zero_size\n7/8 Test #7: test_boot_zero_size ............   Passed    0.00 sec\n    Start 8: test_boot_oversize\n8/8 Test #8: test_boot_oversize .............   Passed    0.00 sec\n\n100% tests passed, 0 tests failed out of 8\n\nTotal Test time (real) =   0.05 sec")
        .bash("cmake --build build-arm", "[ 12%] Building C object boot/CMakeFiles/boot.elf.dir/src/boot_main.c.obj\n[ 25%] Building C object boot/CMakeFiles/boot.elf.dir/src/crc32.c.obj\n[ 87%] Linking C executable boot.elf\n/opt/gcc-arm-none-eabi/bin/../lib/gcc/arm-none-eabi/13.2.1/../../../../arm-none-eabi/bin/ld: boot.elf section `.text' will not fit in region `FLASH'\n/opt/gcc-arm-none-eabi/bin/../lib/gcc/arm-none-eabi/13.2.1/../../../../arm-none-eabi/bin/ld: region `FLASH' overflowed by 412 bytes\ncollect2: error: ld returned 1 exit status\ngmake[2]: *** [boot/CMakeFiles/boot.elf.dir/build.make:132: boot/boot.elf] Error 1\n\nCommand exited with code 2")
        .build();
    messages.extend(parallel_turn(
        |index| format!("call_boot_{index}"),
        "Looking at the linker script and the compile flags side by side.",
        &[
            ("read", json!({"path": "boot/STM32F401_boot.ld"}), "MEMORY\n{\n  FLASH (rx) : ORIGIN = 0x08000000, LENGTH = 32K\n  RAM (rwx)  : ORIGIN = 0x20000000, LENGTH = 96K\n}\nSECTIONS\n{\n  .isr_vector : { KEEP(*(.isr_vector)) } > FLASH\n  .text : { *(.text*) *(.rodata*) } > FLASH\n}"),
            ("bash", json!({"command": "grep -n 'COMPILE_OPTIONS\\|LINK_OPTIONS\\|BOOT_LOG' boot/CMakeLists.txt"}), "14:target_compile_options(boot.elf PRIVATE -Os -mcpu=cortex-m4 -mthumb)\n15:target_compile_definitions(boot.elf PRIVATE BOOT_LOG_ENABLED=1)\n21:target_link_options(boot.elf PRIVATE -T${CMAKE_CURRENT_SOURCE_DIR}/STM32F401_boot.ld -specs=nano.specs)"),
            ("bash", json!({"command": "arm-none-eabi-nm --size-sort -S build-arm/boot/CMakeFiles/boot.elf.dir/src/*.obj | tail -5"}), "00000088 T crc32_update\n000000f4 T boot_main\n000003a0 T _vfprintf_r\n000004c8 T _svfprintf_r\n00000610 T _dtoa_r"),
        ],
    ));
    messages.extend(SessionBuilder::new()
        .assistant("Already `-Os`, but there is no section garbage collection and `BOOT_LOG` pulls in newlib's printf (about 3.5 KiB). I'll add `-ffunction-sections -fdata-sections` with `-Wl,--gc-sections`, and compile `BOOT_LOG` out unless `BOOT_DEBUG` is set, rather than moving to the hardware CRC unit, which would need its own driver and tests.")
        .edit("boot/CMakeLists.txt", "target_compile_options(boot.elf PRIVATE -Os -mcpu=cortex-m4 -mthumb)\ntarget_compile_definitions(boot.elf PRIVATE BOOT_LOG_ENABLED=1)", "target_compile_options(boot.elf PRIVATE -Os -mcpu=cortex-m4 -mthumb -ffunction-sections -fdata-sections)\nif(BOOT_DEBUG)\n  target_compile_definitions(boot.elf PRIVATE BOOT_LOG_ENABLED=1)\nendif()")
        .edit("boot/CMakeLists.txt", "-specs=nano.specs)", "-specs=nano.specs -Wl,--gc-sections)")
        .bash("cmake --build build-arm && arm-none-eabi-size build-arm/boot/boot.elf", "[100%] Linking C executable boot.elf\n[100%] Built target boot.elf\n   text    data     bss     dec     hex filename\n  27116     112    2240   29468    731c build-arm/boot/boot.elf")
        .assistant("The bootloader links again: 27116 bytes of text in the 32 KiB region, with logging compiled out in normal builds (`-DBOOT_DEBUG=ON` brings it back, but that build will not fit).")
        .user("good. flash it on the Nucleo with openocd and check that a corrupted image really drops into DFU")
        .tool("bash", json!({"command": "openocd -f board/st_nucleo_f4.cfg -c \"program build-arm/boot/boot.elf verify reset exit\""}), None)
        .build());
    Case {
        name: "stm32 bootloader crc update, ctxkit earlier summary (held out, 13th set)",
        messages,
        previous: Some(previous.to_owned()),
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: no dynamic allocation",
                &["malloc", "dynamic allocation"],
            ),
            fact(
                "constraint: 32 KiB flash",
                &["32 KiB", "32K", "32768", "0x08007FFF"],
            ),
            fact(
                "CRC check in boot_main.c (done now)",
                &["boot/src/boot_main.c"],
            ),
            fact("CRC code", &["boot/src/crc32.c", "crc32_update"]),
            fact(
                "earlier decision: bitwise CRC, no table",
                &["lookup table", "bitwise"],
            ),
            fact("host test command", &["ctest --test-dir build-host"]),
            fact(
                "compiler error",
                &["implicit declaration", "crc32_finalize"],
            ),
            fact("cross build command", &["cmake --build build-arm"]),
            fact(
                "linker error",
                &["overflowed by 412 bytes", "will not fit in region"],
            ),
            fact("decision: gc-sections", &["gc-sections"]),
            fact(
                "decision: BOOT_LOG compiled out unless BOOT_DEBUG",
                &["BOOT_DEBUG", "BOOT_LOG"],
            ),
            fact("size after", &["27116", "27,116"]),
            fact("branch", &["feat/boot-crc"]),
            fact("toolchain file", &["cmake/arm-none-eabi.cmake"]),
            fact(
                "open: flash with openocd, try a corrupted image",
                &["openocd"],
            ),
        ],
    }
}

/// A Symfony app in a session held in Polish (tool output in English): PDF export of an invoice with
/// a constraint on dependencies, a Doctrine error fixed with a migration, a file name the user changes
/// their mind on, a commit, and a question on Polish characters still open.
fn symfony_pdf_polish() -> Case {
    let messages = SessionBuilder::new()
        .user("Cześć. Potrzebuję eksportu faktury do PDF w naszej aplikacji (Symfony). Ważne: nie dodawaj żadnych nowych zależności przez composer — dompdf już mamy w composer.json i ma wystarczyć.")
        .bash("composer show | grep -Ei 'symfony/framework-bundle|dompdf|doctrine/orm'", "doctrine/orm                 2.17.2  Object-Relational-Mapper for PHP\ndompdf/dompdf                2.0.4   DOMPDF is a CSS 2.1 compliant HTML to PDF converter\nsymfony/framework-bundle     v6.4.3  Provides a tight integration between Symfony components and the Symfony full-stack framework")
        .bash("php bin/console debug:router | grep -i invoice", "  invoice_index      GET      ANY      ANY    /invoices\n  invoice_show       GET      ANY      ANY    /invoices/{id}\n  invoice_edit       GET|POST ANY      ANY    /invoices/{id}/edit")
        .assistant("Mamy Symfony 6.4.3 i dompdf 2.0.4. Dodam osobny kontroler `InvoicePdfController` z trasą `/invoices/{id}/pdf` i szablon `invoice/pdf.html.twig`, żeby nie ruszać istniejącego `InvoiceController`.")
        .write("src/Controller/InvoicePdfController.php", "<?php\n\nnamespace App\\Controller;\n\nuse App\\Entity\\Invoice;\nuse Dompdf\\Dompdf;\nuse Symfony\\Bundle\\FrameworkBundle\\Controller\\AbstractController;\nuse Symfony\\Component\\HttpFoundation\\Response;\nuse Symfony\\Component\\Routing\\Attribute\\Route;\n\nfinal class InvoicePdfController extends AbstractController\n{\n    #[Route('/invoices/{id}/pdf', name: 'invoice_pdf', methods: ['GET'])]\n    public function __invoke(Invoice $invoice): Response\n    {\n        $dompdf = new Dompdf();\n        $dompdf->loadHtml($this->renderView('invoice/pdf.html.twig', ['invoice' => $invoice]));\n        $dompdf->render();\n\n        return new Response($dompdf->output(), 200, [\n            'Content-Type' => 'application/pdf',\n            'Content-Disposition' => sprintf('attachment; filename=\"faktura-%s.pdf\"', $invoice->getNumber()),\n        ]);\n    }\n}\n")
        .write("templates/invoice/pdf.html.twig", "<h1>Faktura {{ invoice.number }}</h1>\n<table>\n{% for line in invoice.lines %}\n  <tr><td>{{ line.name }}</td><td>{{ line.net }}</td><td>{{ line.vatRate }}%</td></tr>\n{% endfor %}\n</table>")
        .bash("php bin/phpunit tests/Controller/InvoicePdfControllerTest.php", "PHPUnit 10.5.9 by Sebastian Bergmann and contributors.\n\nE\n\nThere was 1 error:\n\n1) App\\Tests\\Controller\\InvoicePdfControllerTest::testDownloadsPdf\nDoctrine\\DBAL\\Exception\\InvalidFieldNameException: An exception occurred while executing a query: SQLSTATE[42S22]: Column not found: 1054 Unknown column 'i1_.vat_rate' in 'field list'\n\n/app/vendor/doctrine/dbal/src/Driver/API/MySQL/ExceptionConverter.php:67\n/app/src/Controller/InvoicePdfController.php:17\n\nERRORS!\nTests: 1, Assertions: 0, Errors: 1.\n\nCommand exited with code 2")
        .assistant("Pole `vatRate` w encji `InvoiceLine` zostało dodane wcześniej, ale nie ma dla niego migracji, więc testowa baza nie ma kolumny `vat_rate`. Generuję migrację zamiast zmieniać szablon.")
        .bash("php bin/console make:migration && php bin/console doctrine:migrations:migrate -n --env=test", " Success!\n Next: Review the new migration \"migrations/Version20261126141502.php\"\n\n [notice] Migrating up to DoctrineMigrations\\Version20261126141502\n [notice] finished in 41.2ms, used 22M memory, 1 migrations executed, 1 sql queries")
        .bash("php bin/phpunit tests/Controller/InvoicePdfControllerTest.php", "PHPUnit 10.5.9 by Sebastian Bergmann and contributors.\n\n.                                                                   1 / 1 (100%)\n\nTime: 00:00.912, Memory: 38.00 MB\n\nOK (1 test, 3 assertions)")
        .user("Super. Nazwa pliku: zostań przy faktura-{numer}.pdf")
        .assistant("Zostaje `faktura-{numer}.pdf`.")
        .user("A jednak nie — księgowość chce angielskich nazw, zrób invoice-{number}.pdf")
        .edit("src/Controller/InvoicePdfController.php", "filename=\"faktura-%s.pdf\"", "filename=\"invoice-%s.pdf\"")
        .edit("tests/Controller/InvoicePdfControllerTest.php", "faktura-FV-2026-0042.pdf", "invoice-FV-2026-0042.pdf")
        .bash("php bin/phpunit", "PHPUnit 10.5.9 by Sebastian Bergmann and contributors.\n\n...............................................  47 / 112 ( 41%)\n...............................................  94 / 112 ( 83%)\n..................                              112 / 112 (100%)\n\nTime: 00:07.341, Memory: 64.00 MB\n\nOK (112 tests, 356 assertions)")
        .bash("git switch -c feature/faktura-pdf && git add -A && git commit -m \"Eksport faktury do PDF (dompdf), migracja vat_rate\"", "Switched to a new branch 'feature/faktura-pdf'\n[feature/faktura-pdf 5fa2e90b] Eksport faktury do PDF (dompdf), migracja vat_rate\n 4 files changed, 96 insertions(+)\n create mode 100644 migrations/Version20261126141502.php\n create mode 100644 src/Controller/InvoicePdfController.php\n create mode 100644 templates/invoice/pdf.html.twig")
        .user("Sprawdź jeszcze, czy polskie znaki (ą, ę, ł, ż) wyświetlają się w PDF, bo w starym systemie były znaki zapytania.")
        .bash("php bin/console app:invoice:render-sample FV/2026/0042 > /tmp/sample.pdf && pdftotext /tmp/sample.pdf - | head -3", "Faktura FV/2026/0042\nUs?uga wdro?eniowa\nKonsultacje ?ród?owe")
        .assistant("Tak, są znaki zapytania: domyślna czcionka dompdf (Helvetica) nie ma polskich znaków. Spróbuję ustawić `font-family: DejaVu Sans` w szablonie — ta czcionka jest w dompdf, więc nie trzeba nowej zależności.")
        .build();
    Case {
        name: "symfony invoice pdf in Polish (held out, 13th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::History,
        chinese: false,
        held_out: true,
        facts: vec![
            fact(
                "constraint: no new composer dependencies",
                &[
                    "zależności",
                    "dependencies",
                    "dependency",
                    "composer require",
                ],
            ),
            fact("dompdf version", &["2.0.4"]),
            fact("Symfony version", &["6.4.3", "Symfony 6.4"]),
            fact(
                "controller",
                &[
                    "src/Controller/InvoicePdfController.php",
                    "InvoicePdfController",
                ],
            ),
            fact("route", &["/invoices/{id}/pdf"]),
            fact("template", &["invoice/pdf.html.twig"]),
            fact("the error", &["Unknown column", "vat_rate"]),
            fact("migration", &["Version20261126141502"]),
            fact("test command", &["php bin/phpunit"]),
            fact(
                "file name after the change of mind",
                &["invoice-{number}.pdf", "invoice-%s.pdf"],
            ),
            fact("branch", &["feature/faktura-pdf"]),
            fact("commit", &["5fa2e90b"]),
            fact(
                "open: Polish characters shown as question marks",
                &[
                    "polskie znaki",
                    "Polish characters",
                    "ą, ę",
                    "znaki zapytania",
                ],
            ),
            fact("planned fix: DejaVu Sans font", &["DejaVu"]),
        ],
    }
}

/// A branch summary of an abandoned move of CI from GitHub Actions to Buildkite: timed builds, a
/// plugin that broke, lost JUnit reports, the agents' cost, and the security review that ended it.
fn abandoned_buildkite() -> Case {
    let messages = SessionBuilder::new()
        .user("We're trying Buildkite instead of GitHub Actions for the monorepo CI, on branch ci/buildkite-migration. Keep .github/workflows/ci.yml untouched until we decide; both should run side by side for a week.")
        .bash("git switch -c ci/buildkite-migration && gh run list --workflow ci.yml --limit 20 --json durationMs --jq '[.[].durationMs] | add / length / 1000'", "Switched to a new branch 'ci/buildkite-migration'\n860.4")
        .assistant("Baseline: GitHub Actions CI takes 14m 20s on average over the last 20 runs.")
        .write("scripts/ci/test.sh", "#!/usr/bin/env bash\nset -euo pipefail\ndocker compose -f ci/compose.yml run --rm test-runner make test JUNIT_DIR=reports/junit\n")
        .write(".buildkite/pipeline.yml", "steps:\n  - label: \":hammer: test\"\n    command: scripts/ci/test.sh\n    plugins:\n      - docker-compose#v4.16.0:\n          run: test-runner\n          config: ci/compose.yml\n    artifact_paths: \"reports/junit/**/*.xml\"\n    agents:\n      queue: monorepo\n")
        .bash("buildkite-agent pipeline upload --dry-run .buildkite/pipeline.yml | head -5", "{\n  \"steps\": [\n    {\n      \"label\": \":hammer: test\",\n      \"command\": \"scripts/ci/test.sh\",")
        .bash("bk build create --pipeline acme/monorepo --branch ci/buildkite-migration --wait", "Build #17 created: https://buildkite.com/acme/monorepo/builds/17\n:hammer: test  failed in 1m 12s\n  🚨 Error: The docker-compose plugin failed\n  error: no such service: test-runner\n  (ci/compose.yml was resolved relative to the plugin checkout, not the repository)\n\nCommand exited with code 1")
        .assistant("The plugin resolves `config:` from its own checkout directory. Since `scripts/ci/test.sh` already runs compose, I'll drop the docker-compose plugin and call the script directly.")
        .edit(".buildkite/pipeline.yml", "    plugins:\n      - docker-compose#v4.16.0:\n          run: test-runner\n          config: ci/compose.yml\n", "")
        .bash("bk build create --pipeline acme/monorepo --branch ci/buildkite-migration --wait", "Build #18 created: https://buildkite.com/acme/monorepo/builds/18\n:hammer: test  passed in 23m 10s\n  (cold docker layer cache on new agent i-0c41e9; pulled 6.1 GB)")
        .bash("bk build create --pipeline acme/monorepo --branch ci/buildkite-migration --wait", "Build #19 created: https://buildkite.com/acme/monorepo/builds/19\n:hammer: test  passed in 8m 50s\n  artifact upload: 0 files matched reports/junit/**/*.xml")
        .assistant("Warm builds take 8m 50s against 14m 20s on Actions, but a cold agent takes 23m 10s, and no JUnit files were uploaded: the reports are written inside the container and never reach the host because `ci/compose.yml` mounts no volume for `reports/`.")
        .edit("ci/compose.yml", "  test-runner:\n    build: .", "  test-runner:\n    build: .\n    volumes:\n      - ./reports:/app/reports")
        .bash("bk build create --pipeline acme/monorepo --branch ci/buildkite-migration --wait", "Build #20 created: https://buildkite.com/acme/monorepo/builds/20\n:hammer: test  passed in 9m 04s\n  artifact upload: 214 files matched reports/junit/**/*.xml\n  junit-annotate: 3,412 tests, 0 failures")
        .bash("aws pricing get-products --service-code AmazonEC2 --filters Type=TERM_MATCH,Field=instanceType,Value=c6i.2xlarge Type=TERM_MATCH,Field=location,Value='EU (Ireland)' --query 'PriceList[0]' | jq -r '.terms.OnDemand[].priceDimensions[].pricePerUnit.USD'", "0.4032")
        .assistant("Two c6i.2xlarge agents running around the clock would cost about $590 a month, against roughly $310 a month of Actions minutes now.")
        .user("Security review came back: they won't approve self-hosted agents that hold the production deploy credentials. So forget the side-by-side week, drop Buildkite entirely. Just try the bigger GitHub-hosted runner on the existing workflow instead.")
        .edit(".github/workflows/ci.yml", "    runs-on: ubuntu-latest", "    runs-on: ubuntu-latest-8-cores")
        .bash("gh workflow run ci.yml --ref ci/buildkite-migration && sleep 600 && gh run list --workflow ci.yml --branch ci/buildkite-migration --limit 1 --json durationMs,conclusion", "[{\"conclusion\":\"success\",\"durationMs\":462000}]")
        .assistant("The 8-core GitHub-hosted runner finishes in 7m 42s. Buildkite is abandoned; the only things worth carrying over are `scripts/ci/test.sh` and the `reports/` volume in `ci/compose.yml`, which fix the missing JUnit reports on any runner.")
        .user("ok, close this branch. I'll open a fresh PR with just the runner change and the test script.")
        .build();
    Case {
        name: "abandoned buildkite migration (branch summary; held out, 13th set)",
        messages,
        previous: None,
        purpose: SummaryPurpose::Branch,
        chinese: false,
        held_out: true,
        facts: vec![
            fact("branch", &["ci/buildkite-migration"]),
            fact("pipeline file", &[".buildkite/pipeline.yml"]),
            fact("baseline on Actions", &["14m 20s", "14 min"]),
            fact("warm Buildkite build", &["8m 50s", "9m 04s"]),
            fact("cold agent build", &["23m 10s", "23 min"]),
            fact(
                "what broke: docker-compose plugin",
                &[
                    "no such service",
                    "docker-compose#v4.16.0",
                    "docker-compose plugin",
                ],
            ),
            fact("what broke: JUnit reports not uploaded", &["junit"]),
            fact(
                "fix worth keeping: reports volume in compose",
                &["ci/compose.yml"],
            ),
            fact("script worth keeping", &["scripts/ci/test.sh"]),
            fact("agent cost", &["$590", "590"]),
            fact("current Actions cost", &["$310", "310"]),
            fact(
                "why dropped: security review, deploy credentials",
                &["security review", "deploy credentials"],
            ),
            fact(
                "what replaced it: 8-core GitHub runner",
                &["ubuntu-latest-8-cores", "8-core"],
            ),
            fact("its time", &["7m 42s"]),
            fact(
                "next: fresh PR with runner change and script",
                &["fresh PR", "new PR"],
            ),
        ],
    }
}
