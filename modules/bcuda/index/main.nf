// bcuda index: a FASTA to its BWA 0.7 index (bwa index's files), in a folder of its own; the
// user's default index is left as it is (--not-default). Emits tuple(meta, folder), the
// index input of the other modules, and versions.yml.
process BCUDA_INDEX {
    tag "$fasta"
    label 'process_high'

    conda "${moduleDir}/environment.yml"
    container 'bcuda:0.1.0'

    input:
    tuple val(meta), path(fasta)

    output:
    tuple val(meta), path("bcuda"), emit: index
    path "versions.yml"           , emit: versions

    when:
    task.ext.when == null || task.ext.when

    script:
    def args = task.ext.args ?: ''
    """
    mkdir bcuda
    bcuda index $args --not-default -p bcuda/${fasta.baseName} $fasta

    cat <<-END_VERSIONS > versions.yml
    "${task.process}":
        bcuda: \$(bcuda --version | sed 's/^bcuda //')
    END_VERSIONS
    """
}
