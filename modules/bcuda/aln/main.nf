// bcuda aln: reads to .sai (bwa aln 0.7.17's file, byte for byte), on the GPU when one is found.
// As nf-core's bwa/aln: tuple(meta, reads) with one file per end, the index folder; emits the
// .sai per end and versions.yml. ext.args: aln's options (e.g. '-l 1024 -n 0.01 -o 2').
process BCUDA_ALN {
    tag "$meta.id"
    label 'process_high'
    label 'process_gpu'

    conda "${moduleDir}/environment.yml"
    container 'bcuda:0.1.0'

    input:
    tuple val(meta), path(reads)
    tuple val(meta2), path(index)

    output:
    tuple val(meta), path("*.sai"), emit: sai
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args   = task.ext.args ?: ''
    def prefix = task.ext.prefix ?: "${meta.id}"
    def files  = reads instanceof List ? reads : [reads]
    def ends   = files.size() == 1 ? ["${prefix}.sai"] : files.indices.collect { "${prefix}.${it + 1}.sai" }
    def runs   = [files, ends].transpose().collect { r, sai -> "bcuda aln $args -t $task.cpus -f $sai \$INDEX $r" }.join('\n    ')
    """
    INDEX=\$(find -L ./ -name "*.amb" | sed 's/\\.amb\$//')
    $runs

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """

    stub:
    def prefix = task.ext.prefix ?: "${meta.id}"
    """
    touch ${prefix}.sai
    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """
}
