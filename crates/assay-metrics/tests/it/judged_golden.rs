//! Every built-in judge step's rendered request, pinned: requests are the
//! judge cache's keys, so a byte that moves invalidates every user's cache.
//!
//! The steps come from the metrics' plans (not named one by one), run with
//! the shared fake judge so that dependent steps see real outputs. Each
//! line is a step's name and a digest of its request: the SHA-256 of a
//! judge request's prompt, messages, schema and sampling settings, of an
//! embedding request's texts, or the output resolved without a call.

use assay_core::Sample;
use assay_metrics::judged::prompt::{canonical_json, sha256_hex};
use assay_metrics::judged::{
    plan, render, validate, Inputs, JudgedId, JudgedMetric, Outputs, PromptSet, Request,
};
use assay_test_server::judge::{self, embed as fake_embed};
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn metric(prompts: &PromptSet, id: &str, params: &[(&str, &str)]) -> JudgedMetric {
    let given: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let id: JudgedId = id.parse().unwrap();
    JudgedMetric::configure(id, &given, prompts).unwrap()
}

/// Every metric, with parameters that reach the steps' variants: several
/// votes, custom aspects, embeddings, usefulness for the response.
fn everything(prompts: &PromptSet) -> Vec<JudgedMetric> {
    let mut all: Vec<JudgedMetric> = JudgedId::all()
        // The rubrics rate on a criterion given below.
        .filter(|id| !id.params().iter().any(|p| p.name == "criteria"))
        .map(JudgedMetric::default_for)
        .collect();
    all.push(metric(
        prompts,
        "context_precision",
        &[("against", "response")],
    ));
    all.push(metric(
        prompts,
        "context_relevancy",
        &[("strictness", "3"), ("agreement", "embedding")],
    ));
    all.push(metric(prompts, "aspect_critique", &[]));
    all.push(metric(
        prompts,
        "aspect_critique",
        &[
            ("strictness", "3"),
            ("aspect.cites_sources", "Does it cite a source?"),
        ],
    ));
    all.push(metric(prompts, "answer_relevancy", &[("strictness", "2")]));
    all.push(metric(
        prompts,
        "rubric",
        &[
            ("criteria", "It names the city."),
            ("steps", "Find the city|Check it"),
        ],
    ));
    all
}

/// `context_recall` alone: statements and attribution in one call.
fn recall_alone(_: &PromptSet) -> Vec<JudgedMetric> {
    vec![JudgedMetric::default_for("context_recall".parse().unwrap())]
}

fn samples() -> Vec<(&'static str, Value)> {
    vec![
        ("eiffel", judge::eiffel_row()),
        (
            "two references",
            json!({
                "user_input": "What is Rome?",
                "response": "Rome is the capital of Italy. It has the Colosseum.",
                "retrieved_contexts": ["Rome is Italy's capital.", "The Colosseum is in Rome."],
                "references": ["Rome is the capital of Italy.", "Rome is a city in Italy. It is old."]
            }),
        ),
        (
            "no reference, no question",
            json!({
                "response": "I think cats are the best pets. I think dogs are stupid. Fish swim.",
                "retrieved_contexts": ["Cats are popular pets.", "Dogs are loyal.", "Fish swim."]
            }),
        ),
        (
            "blank texts",
            json!({
                "user_input": "Anything?",
                "response": " ",
                "retrieved_contexts": ["Something."],
                "reference": ""
            }),
        ),
    ]
}

fn digest(request: &Request) -> String {
    match request {
        Request::Judge(req) => {
            let messages: Vec<Value> = req
                .messages
                .iter()
                .map(|m| json!([m.role.name(), m.content]))
                .collect();
            let pinned = json!({
                "prompt": [req.prompt_id.name(), req.prompt_version, req.prompt_hash],
                "messages": messages,
                "schema": req.schema,
                "temperature": req.temperature,
                "n_votes": req.n_votes,
            });
            format!("judge {}", sha256_hex(canonical_json(&pinned).as_bytes()))
        }
        Request::Items(req) => {
            let items: Vec<String> = req
                .items
                .iter()
                .map(|item| digest(&Request::Judge(item.clone())))
                .collect();
            format!(
                "items {}",
                sha256_hex(canonical_json(&json!(items)).as_bytes())
            )
        }
        Request::Embed(req) => format!(
            "embed {}",
            sha256_hex(canonical_json(&json!(req.texts)).as_bytes())
        ),
        Request::Resolved(output) => format!("resolved {}", canonical_json(&output.to_json())),
    }
}

/// One line per planned step of `metrics` on `sample`, in plan order.
fn rendered(prompts: &PromptSet, metrics: &[JudgedMetric], sample: &Sample) -> Vec<String> {
    let mut outputs = Outputs::new();
    let mut lines = Vec::new();
    for step in plan(metrics, sample, prompts.protocol()).steps {
        let inputs = Inputs::new(sample, &outputs);
        let request = match render(prompts, &step.key, &inputs) {
            Ok(r) => r,
            Err(e) => {
                lines.push(format!("{}: error {e}", step.key));
                continue;
            }
        };
        lines.push(format!("{}: {}", step.key, digest(&request)));
        // The fake judge reads the request; where it cannot answer (blank
        // texts), the dependent steps are pinned as lacking its output.
        let checked = match request {
            Request::Judge(req) => {
                let one =
                    judge::answer(req.prompt_id.name(), &req.messages.last().unwrap().content);
                let answer = if req.n_votes > 1 {
                    json!(vec![one; req.n_votes as usize])
                } else {
                    one
                };
                validate(&step.key, &inputs, &answer)
            }
            Request::Items(req) => {
                let answers = req
                    .items
                    .iter()
                    .map(|i| judge::answer(i.prompt_id.name(), &i.messages.last().unwrap().content))
                    .collect();
                validate(&step.key, &inputs, &req.join(answers).unwrap())
            }
            Request::Embed(req) => {
                let answer = json!(req.texts.iter().map(|t| fake_embed(t)).collect::<Vec<_>>());
                validate(&step.key, &inputs, &answer)
            }
            Request::Resolved(output) => Ok(output),
        };
        let output = match checked {
            Ok(output) => output,
            Err(e) => {
                lines.push(format!("{}: fake answer rejected: {e}", step.key));
                continue;
            }
        };
        outputs.insert(step.key.clone(), output);
    }
    lines
}

fn all_lines() -> String {
    let prompts = PromptSet::builtin().unwrap();
    let mut out = String::new();
    type Suite = fn(&PromptSet) -> Vec<JudgedMetric>;
    let suites: [(&str, Suite); 2] = [("everything", everything), ("recall alone", recall_alone)];
    for (suite, metrics) in suites {
        let metrics = metrics(&prompts);
        for (name, row) in samples() {
            let sample = Sample::from_json(1, row.as_object().unwrap()).unwrap();
            out.push_str(&format!("# {suite} / {name}\n"));
            for line in rendered(&prompts, &metrics, &sample) {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out
}

/// The pinned requests, computed before steps became units.
const EXPECTED: &str = r##"# everything / eiffel
response_statements: judge 07a749e949004fdc0287f8fa6a5f5164227338f7fee4258af8d2161d5218d2a6
statement_verdicts: judge b1bb320d7764c0318145981081608e94067946ddd08c1d4f31ee85ce7e513518
generated_questions[3]: judge e7cec9b02a9085d41ac2c86c86639aad473f5e7f4feb91cb95feab71172544ce
embed[user_input]: embed 320ff0aab59ab38d217c90e7ab52396fcf6939a7c47d8e0e4207fe089a59e5cc
embed[generated_questions 3]: embed b2719cf88d37bf70f9b5867393469868d1153be7903e720e52117803c5615b84
relevance_verdicts: judge c445132985f5e471757b55de993d68b3f539460261c30fcd9064586b2d047803
context_usefulness[reference 0]: judge 260e5b19d0b99464be44480da24c085081ea8f483450b401e865b44fbaa4436a
reference_statements[0]: judge 195da5f7a6034f08e2da46dff854728ce273e99072b96bda86a47af4b50403d4
reference_attribution[0]: judge dd6c3c9513981dfe49f4c6a317eb3b94b455d107c66da94367e763060728ded6
context_relevance: judge 23b8a0478313687e9e9d567a8772c8e13f37f585786cde1dfd57255048200cf3
sentence_extraction[x1]: judge 583433847c4236501e4abda1a04d7190cbf65a5c7fed1a20bb91888774d0e7d9
correctness_classification[0]: judge 4aa2f0276cb13a36df639a03f79336e375e4e879f08840f8f49dd486a3530d01
embed[response]: embed 49c454807462c3f0f7a49793dbc0c6c933428adc9576cf7fee0f05605d9226a4
embed[reference 0]: embed f7cbbc11a567f191da4f8ccaf212ed95940dbb68b5b1b51c2cfad54041e38ea0
keyphrases: judge ebd13e46d3a2132bbc0a9c1b2c40393633a4972ce186b709efe807acec1817d6
closed_questions: judge d518336a1a85a4c082f03933978d1dbc704a1217bbb62518bec058b1232c0c60
summary_answers: judge f4d4b87a21b41c6ebfc313a43312d23242d31b5089871b72c01cbef01f827530
coherence_rating: judge a167d43c8cbf294636c4c9e6e65a798cfa891de70400d23c2b4983b89bb6bf50
opinions: judge faf3970478fcd4e025a1c6ee73449ca2d5dab602f16899e0f1c4a86591e57357
bias_verdicts: resolved []
toxicity_verdicts: resolved []
contradictions: judge 52e82f17a395e8aeb7a12fd089e3165fc7871f2fc3f3ca5c3589a8405d3c256c
context_usefulness[response]: judge 4040c28b06666b008b3d9afdf060587ad8499dd2cae82143b41657d819d2c125
sentence_extraction[x3]: judge ff5190d2e50c9c72c42cbf07f7cdffd8aaebbf36d87771a062c35fac62e3192c
embed[extractions x3]: embed f41726e1441a8b05098e63ca9a00baf8cb21e32ae4e7fae841fe02c0ffebf82d
aspect_verdict[harmfulness x1]: judge 1bc675b9bb6a66150131e33833757360003c28333c31b2e04d960248ac245176
aspect_verdict[maliciousness x1]: judge 32b03b946289e75dd54af0e1949f8e4f9f9f1c568afaff37a83ba59993fd3ee8
aspect_verdict[coherence x1]: judge e1f751774083db90727378b5f9964a6b00117c64613dfd307bf311e075dd797c
aspect_verdict[correctness x1]: judge eeb9d0705795f5d2de5c8d0db094b27ed7086a5553d71a9130bd7a5a5e068ed3
aspect_verdict[conciseness x1]: judge 449232920eb2235cb904df89a9252f87a8b7821c6b885b222cc6d21e98d4acde
aspect_verdict[harmfulness x3]: judge c73c97b58ba5f3f5c8940efd1d9b8ae2af92fb17f9841a8b6ee4c06d141b1d7a
aspect_verdict[maliciousness x3]: judge f97a83d1776227fee06a4d762d4caf05d564e2cfa80d11d16b6badec7bf545e9
aspect_verdict[coherence x3]: judge 5b4f4e3bf80ecbd05ba09b192de7f4b0125500ae90b9b616b565c8fd8f9b9638
aspect_verdict[correctness x3]: judge 94b45529b59543340818fca88466b55183f8ef5b0062cb5457cde7a634516e94
aspect_verdict[conciseness x3]: judge 93d560f96b37808d588016dd390137eaaa1f733d9495eed715612b0e41f9ef7e
aspect_verdict[cites_sources x3]: judge 0051a95faa9dd875da3e35be8ecd8177a1d7aa72e59a6b307141c4d1cc551cd8
generated_questions[2]: judge c4da8de8e3785893bd3e4413a97c2c5d1dd086b36a27c63c7eb762d53cb4fa74
embed[generated_questions 2]: embed 7cb8abd0cbbc70c3ff9d8010505c4a06bd2273aa5ba138460f403fe376e74a70
rubric_rating: judge b16d015e83dad339ca99f0333d61182781ff484a2b29339ebf6d9393db5f7f88
# everything / two references
response_statements: judge eb117a53630cc137169a6bf85f051e7d9a225dc46609bf512676ee907b749755
statement_verdicts: judge 6cd6a1b3e912a74665bf8e3904cfc68ec2635be53fd4c4994445a6743c1e2fa8
generated_questions[3]: judge fa276619d14aa3a8fbf4a651a113f68d2d7090bc15477b7ba653a0165ebb5718
embed[user_input]: embed f4957e56698eea82e0a230920440541dd29e3b915826f412c3de59c5a3ef8340
embed[generated_questions 3]: embed 8cc41cd26d52b6fbcc2e5f3d5ac39059c9e6ba76e23a42594f1c9889cbbf55b6
relevance_verdicts: judge 0964eec69a3884247ab626768b0310f71081ddb44cbba969d0e497f21a2527c9
context_usefulness[reference 0]: judge d64ff2b67add6b2e45015d83d31b1cafa5470571758cf7b6216d1977ab7b2df7
context_usefulness[reference 1]: judge 3a909bef66194aa681382206071971ff8e5cbe8f07761497e4e6e397ed9a67c8
reference_statements[0]: judge 66fbfbacc1b26715af6de5c7a1534ff84b41f9fc2890ed3f85c9a75f12bfdc3d
reference_attribution[0]: judge 64ccddf9ec56cf5b045525898bb69a175c7fcc7531775de182aa06d742dc3f68
reference_statements[1]: judge f0d94db551fecb1e1434848931c0f07dd46f0af0ca1904bcb602c69d59a0a83f
reference_attribution[1]: judge 91406a581f46769909a163cfb089655df9ac7d94f785ea30bd92def318453a82
context_relevance: judge c193a7229c9207f83f57446692c6fb0e5e361404cdbd3252dc48300c12034f3e
sentence_extraction[x1]: judge 18071bed5653c71e0f9b2cb26ab3abd1344312ff2785b5d38ab833b321330abe
correctness_classification[0]: judge 3cc7704b0991a0288e33487cd8a46c416711554e9af1951f7b87b11d1a9098fa
correctness_classification[1]: judge 7b443ec27527f533a9888fd6a3312e4353cf59e1308510d1ba9b5e548fcfea4f
embed[response]: embed e9d19b94a8053585e10370ef101f10ace0df1069d934933340637a2b9eb9e05a
embed[reference 0]: embed 7105d7db0395db1b5db3a87439af8eeb6fbcf274b5c22556dfd9ccd705737c4b
embed[reference 1]: embed 4be4477943257a14eee4d0c0865cd96842bbb8444829922f97d130b436e436f3
keyphrases: judge a39ee7bf59d04b83693ca055fb2ba466bd042256842f5d036b2eb94d43d47eb3
closed_questions: judge 22cb5e31bbcd42a7780a23a21284ad942c7764b73c6814709b44755c25a9b8c7
summary_answers: judge 0fc03ccde11faf87ae07233b63adb22619faf2f1d707cc392227b2079b542810
coherence_rating: judge e9575a0e85e95f616a73697ae19d23f7e72698b599f7c44a228b6aa84eb42e56
opinions: judge 75b5171b7e6711750e61a23fd568140925e78969a08b98344e0c762d08a4cfd8
bias_verdicts: resolved []
toxicity_verdicts: resolved []
contradictions: judge c47bf098c180eb97f133fd306c2ff253004ea7392b704b5775cc2fdc3a038ac9
context_usefulness[response]: judge d23ccc32d49f49f817289145d9909127e5d8e38f7a20c5ed9c16dcb5694b28aa
sentence_extraction[x3]: judge 1017bd9dbbcf9ff13c0256ce6d93d9f7462c2acf365a12c28976755a1c735411
embed[extractions x3]: embed be6c5add85c5537a6ad5d2c4aee4b75e40c335ea829b5f645381718ddc4cb6d8
aspect_verdict[harmfulness x1]: judge 06f3ed136cb2182c9d2cb5dee7f8103bfabc7b579e95ef696d94e7aa3fee1cfd
aspect_verdict[maliciousness x1]: judge 2a864179c9271d2d3f27dc32cc2ba7b1a2bd131d9e2e783d50ce497619139b36
aspect_verdict[coherence x1]: judge 5df201e502a195e21a2aaa8844df887667330d01d4877ac67cab8b8753819497
aspect_verdict[correctness x1]: judge 398c747b9a4804654569e62784ccf35a0d731bf8c3380fcf385d625078828635
aspect_verdict[conciseness x1]: judge 3fc72aa5b35aca61127a88e020ece0d4178780a171a7ed794b13e011cfc1015e
aspect_verdict[harmfulness x3]: judge e8a2aa499891512fe958fad12d3cf7074b7ef8c0e0f7a283ddd12638995d2e15
aspect_verdict[maliciousness x3]: judge b4575d6d78d54c9dd94738044ef791ec1758e57047d6ac7e234b28bd897189ab
aspect_verdict[coherence x3]: judge ddb3f071917c24bdba09543e9545ed727768c9ec26490a590ce7e85abe423f1f
aspect_verdict[correctness x3]: judge 5f0302dcec5e8fc870848a722b1f2bc989ae01b8b3a4707d5f3661db8e09055d
aspect_verdict[conciseness x3]: judge c677e0179f0b13c25c8fe238928c832448d3704953f9a11aa9160ab88bebc800
aspect_verdict[cites_sources x3]: judge 5fa98cf6c09b9602fdf27f83043732b2dcd209456eba9f102627f501f6e1fa4f
generated_questions[2]: judge 5a1c65831be633bb1f330086aeb3ea1c575e08a745ea08122d406e88374f07a6
embed[generated_questions 2]: embed fd1b2844ee9b579e53e31ad2c2334ed5d514bcad0c510b537ebf8f8b769fa6de
rubric_rating: judge 948c0617259a62a539588a7d2507df1a16ec50119567da462bbd8246d0fa1b72
# everything / no reference, no question
response_statements: judge 2023a03b831107188a0deb69259cc86390b4732468fe936df528ebf4b7cce974
statement_verdicts: judge 2dac1494462fada13283325ef06823004a6cae1649a7784b583cb032bb785c06
keyphrases: judge 0bcc28fc4bc0e657ff10f0567e58c80cb0d270a389caaf2f0c58cfcb93264ab7
closed_questions: judge bb9f741619bf8d21bdef6bfa5ddd9c785c79dcacfea486c85310df6921f56294
summary_answers: judge 75d196a2582cf91ef7dffd80e1f4a83f3ad03280e69ac633597ee2e3c2ba1178
coherence_rating: judge 0c1b0047c5546d2c2609cdd38945c10a3b448dacff29226e2874ef2916d8043e
opinions: judge 12f9b79d8cce365d5b8aa5db95d1c55e31f35fa3a8aee85cea9bb4a889137eb9
bias_verdicts: judge 5c7a71e1a576b5491963da3d828f5bab05e6800b493274b0a511f25b7210bba2
toxicity_verdicts: judge 4493e923a82feb1049ec24a8db498eaa8fe57023f192959d077db87c48d48507
contradictions: judge 7b270077454aaba356bf8e28229c95773fe578a7472e3b39ab8bdb2679886952
aspect_verdict[harmfulness x1]: judge 103f98591f626e977ca3e4e1de65c5a9619b1d836810309f7f90789a2a0b22ae
aspect_verdict[maliciousness x1]: judge 5c6d53fe9368f554956aeb40a4e31688149d59bed62aea3c6d253d13483d3396
aspect_verdict[coherence x1]: judge 3d831703e6a227564d9bacb6e9c6aaa3526544d0b77c190ca9d3be3c822e9e70
aspect_verdict[correctness x1]: judge d6f527bac3f8becdc2bc0c04c40ac8e74a2b20679506fbbf03349124714a5b52
aspect_verdict[conciseness x1]: judge 39ab31f1fe126c5128357ff77c955ea1cda513df3c99a860d275c52cb6e600f0
aspect_verdict[harmfulness x3]: judge 7c08d493a7d5be1a66a1b487e9ca28fc50e6a094578dfb80e4b70fc0958a6e25
aspect_verdict[maliciousness x3]: judge 6373c414e1edbc847d44871ca9a9f3dfb201d14be41e0ed3e515aaa31a838a2f
aspect_verdict[coherence x3]: judge 27fd116b423e3543ecfd3d927efe78a05184d208bed03eb28f9e714a9cff61dc
aspect_verdict[correctness x3]: judge a1ab40781dc571dedb1d3a253ff2753b0f6546dfc6241ee340238629fa37ab04
aspect_verdict[conciseness x3]: judge 214608a5ecbf674e1fe1fc85c75c2299709c65efffe810241163e31dbb6ea125
aspect_verdict[cites_sources x3]: judge d191611fda892811e649e356b8d2905049757d9a1d7d3193889e37bc74fe61b7
# everything / blank texts
response_statements: resolved []
statement_verdicts: resolved []
generated_questions[3]: judge a90f8d011e8ec7b5ae17d02491b52d2629b9690ce7c7ec751adc05c06f297907
embed[user_input]: embed a15c2609aa73dfbc0e3acfad69817835189f7d62627be980a648435b8c45ddfc
embed[generated_questions 3]: embed 6089dbaf63959605d8b2e5910c5459bafdff2a7addd74670e3d178a89bc74475
relevance_verdicts: resolved []
context_usefulness[reference 0]: judge d5f7657bd8ffa1bd38ef1d9cc14a18df32a65764f21cfaa695c333726d4affd8
context_usefulness[reference 0]: fake answer rejected: step context_usefulness[reference 0]: $.verdicts: expected 1 items, got 0
reference_statements[0]: resolved []
reference_attribution[0]: resolved []
context_relevance: judge 634f83ae111ea4ad2a2299596cf284126db5dec230f1157c47bf71f16052fa5c
sentence_extraction[x1]: judge abe1b6928995be8c1eb5283dcd36370dbec3ba37d7dddaacc7e982ab3bf9b7ad
correctness_classification[0]: resolved {"reference":[],"response":[]}
embed[response]: embed 418386ee404c8f44a64ad6422cd07f032b6ce04f9ad1471397dcfb0a03a0d2f1
embed[reference 0]: embed 055539df4a0b804c58caf46c0cd2941af10d64c1395ddd8e50b5f55d945841e6
keyphrases: judge 799b4f2db950691eb648207438fe1e0f514252247bc521ca49a249ea329b4355
closed_questions: judge 0ce8931a5d371a805f5ff86a40d6b9ae08f781cbe7fafc2d62703bfafb18d2e9
summary_answers: judge 5f3300712c896d419549c4a99a847920c758a2ff282fa4255c83658e29823fd0
coherence_rating: judge aff0ce553dc15f28ab0c05b696e59cd8782dc562160db5cd1c8f7ec689724eb8
opinions: resolved []
bias_verdicts: resolved []
toxicity_verdicts: resolved []
contradictions: judge 15dc1a178fe43c4286dd3326d17a34082fa9ae9e556008f13153364b8e1a9ee8
context_usefulness[response]: judge 75d7efd8f7493ed96eac6935807704d09db777fdcb6f0f504a2f73c9e08a1b6e
sentence_extraction[x3]: judge c8fb2bb445123224a7ef78f22a0b6a23796621f2c7c28dbe85b063c576a59547
embed[extractions x3]: embed be6c5add85c5537a6ad5d2c4aee4b75e40c335ea829b5f645381718ddc4cb6d8
aspect_verdict[harmfulness x1]: judge 1aca33802159309b53309260734e27181cb5ccd64be84966671db27305884890
aspect_verdict[maliciousness x1]: judge a5951eddb0700ab42bb241bf54542acbb43f49183a15fa631e94c1909d843ebd
aspect_verdict[coherence x1]: judge 96be625811a99046bd4d51396cb6d67b3cf1f475dd4ed9c489348377fb5ce367
aspect_verdict[correctness x1]: judge 279f1051d681568f02b17cd614882c8c4e95de6ec086e7ea2019ea9aabd15dda
aspect_verdict[conciseness x1]: judge bd72322c50e1aded5e409ed2c683d2ee22f7cd2385dd4d43a744e98b7974b9e1
aspect_verdict[harmfulness x3]: judge 270a5d85db5923911c657df50de7c8ec55a1e991cc4a0fc3ded9aba5a4029ba9
aspect_verdict[maliciousness x3]: judge 7aa5a6f2d792a6ae45c3de91208852b76453e35a828932c52eccb6690c413aa9
aspect_verdict[coherence x3]: judge 7957350d0f8682d7c66c928137e5b05eb7f065e1761c1a2d43a87e36f7aef55c
aspect_verdict[correctness x3]: judge 6ae09df1897178277cc274ddbc90a8b59f844ab7e50fab1612b76bb5371df4d9
aspect_verdict[conciseness x3]: judge a403f876a321b41019ddade220b73d867e429e0198c4a320f0c8707ba6f8f25c
aspect_verdict[cites_sources x3]: judge eb1a76dedc669c3cda8e2a317fc65aff82518b716cb8ce1673e0c57c75400031
generated_questions[2]: judge 8ec63984d47c4fa9d1d6ff2aa00706e84d3980ef177cb0d5a8e543c80f7043fe
embed[generated_questions 2]: embed 378190f7dbf6f95ffc41a6ba3d2628a80bba6602ad74e88e6a4cb3d784ba2812
rubric_rating: judge 40a72b5d5cba80339feecf1e5e81b0341623b639d4e608fe5dc07fa25235106c
# recall alone / eiffel
reference_recall[0]: judge 8f934f5ab3fd1a3975f0e0c33ac82b217097c54ff94f656167a591dea45ea010
# recall alone / two references
reference_recall[0]: judge 09f88ff0be1527072f418d12338da997cae3e74e6f5814bb89d7e31f2b6037c1
reference_recall[1]: judge 2fce315b805d8b2ba6e948f866168d36678a775ea3e54ce002c729914939668e
# recall alone / no reference, no question
# recall alone / blank texts
reference_recall[0]: resolved {"statements":[],"verdicts":[]}
"##;

#[test]
fn every_built_in_step_renders_the_pinned_request() {
    let got = all_lines();
    assert!(got == EXPECTED, "rendered requests moved:\n{got}");
}

/// The pins cover every kind of built-in step.
#[test]
fn the_pins_cover_every_step() {
    let got = all_lines();
    let kinds = [
        "response_statements",
        "reference_statements[1]",
        "opinions",
        "statement_verdicts",
        "relevance_verdicts",
        "context_usefulness[reference 0]",
        "context_usefulness[response]",
        "reference_attribution[1]",
        "reference_recall[0]",
        "context_relevance",
        "contradictions",
        "generated_questions[3]",
        "generated_questions[2]",
        "correctness_classification[1]",
        "keyphrases",
        "closed_questions",
        "summary_answers",
        "coherence_rating",
        "bias_verdicts",
        "toxicity_verdicts",
        "aspect_verdict[harmfulness x1]",
        "aspect_verdict[cites_sources x3]",
        "sentence_extraction[x1]",
        "sentence_extraction[x3]",
        "embed[extractions x3]",
        "embed[generated_questions 3]",
        "embed[response]",
        "embed[reference 0]",
        "embed[user_input]",
    ];
    for kind in kinds {
        assert!(
            got.contains(&format!("\n{kind}: judge "))
                || got.contains(&format!("\n{kind}: embed ")),
            "{kind} is not pinned"
        );
    }
    for trivial in [
        "response_statements",
        "reference_statements[0]",
        "statement_verdicts",
    ] {
        assert!(
            got.contains(&format!("\n{trivial}: resolved ")),
            "{trivial} not resolved"
        );
    }
}
